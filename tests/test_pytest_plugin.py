"""The pytest plugin: a project with only a derivations/ folder gets one test item per claim."""

import textwrap
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["pytester"]

MODULE = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation, blocks

    derivation = Derivation("week08-mine", title="Week 8, §4 by hand", source="week08.tex")

    @derivation.section("§4 The forward pass by hand")
    def forward_pass(s):
        L = s.ledger("two-token context AB")
        H = L.input("H", sp.eye(2))
        eye = sp.eye(2)
        head = blocks.attention_head(L, H, L.parameter("W_Q", eye), L.parameter("W_K", eye),
                                     L.parameter("W_V", eye), orientation="in_out", mask="causal")
        Z = blocks.linear(L, "Z", blocks.residual(L, "H'", H, head.O), L.parameter("W_out", eye),
                          orientation="in_out")
        P = blocks.probabilities(L, Z)
        s.claim("0.330238", head.A[1, 0], what="w")
        s.claim("1/(1+e^{1/√2})", head.A[1, 0], what="w, exact")
        s.claim("0.792413", P[1, 1], what="p(B|AB)")

    @derivation.section("Shapes")
    def shapes(s):
        s.claim_shape("4×3", (4, 3), what="AV")
''')


@pytest.fixture
def project(pytester):
    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "week08_mine.py").write_text(MODULE, encoding="utf-8")
    (pytester.path / "derivations" / "_helpers.py").write_text("X = 1\n", encoding="utf-8")
    return pytester


def test_registered_through_the_pytest11_entry_point():
    eps = [e for e in entry_points(group="pytest11") if e.name == "symseq"]
    assert [e.value for e in eps] == ["symseq.pytest_plugin"]


def test_one_item_per_claim_named_by_derivation_and_location(project):
    result = project.runpytest("--collect-only", "-q")
    ids = [ln.split("::", 1)[1] for ln in result.outlines if ln.startswith("derivations/week08_mine.py::")]
    assert ids == [
        "week08-mine::§4 The forward pass by hand::w",
        "week08-mine::§4 The forward pass by hand::w, exact",
        "week08-mine::§4 The forward pass by hand::p(B|AB)",
        "week08-mine::Shapes::AV",
    ]


def test_each_erratum_is_one_failing_item_with_the_claims_report(project):
    result = project.runpytest("-q")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*0.792413*mismatch: printed 0.792413, correct 0.792412 (value 0.792411504249)*",
        "FAILED derivations/week08_mine.py::week08-mine::§4 The forward pass by hand::p(B|AB)*",
    ])


def test_a_section_that_does_not_build_is_a_failing_item(pytester):
    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "broken.py").write_text(textwrap.dedent('''
        from symseq import Derivation
        derivation = Derivation("broken", title="Broken", source="b.txt")

        @derivation.section("§1 A typo")
        def one(s):
            s.claim("0.5", undefined_name)
    '''), encoding="utf-8")
    result = pytester.runpytest("-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*section '§1 A typo' did not build: NameError*"])


def test_off_by_option(project):
    project.runpytest("-q", "--no-symseq").assert_outcomes()


def test_never_on_symseqs_own_bundled_folder(pytester):
    import symseq.derivations as pkg

    folder = pkg.__path__[0]
    result = pytester.runpytest("-q", "--symseq-derivations", folder, folder)
    result.assert_outcomes()
    assert "no tests ran" in result.stdout.str()


def test_a_project_without_derivations_is_untouched(pytester):
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    pytester.runpytest("-q").assert_outcomes(passed=1)
