"""The pytest plugin: a project with only a derivations/ folder gets one test item per claim."""

import re
import shutil
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import hypothesis  # noqa: F401  (loaded before the in-process runs below, whose plugin would import it afresh each)
from symseq import Derivation  # noqa: F401  (loaded before them too: a run that imported it first would
                                 # leave its class behind, and the next run's modules would define "no Derivation")
import pytest

from symseq.pytest_plugin import claim_name, node_name

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

# a second module: a section title and claim names with brackets and "::", one name twice, one claim per line
NAMES = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation

    derivation = Derivation("names", title="Names pytest reads as syntax", source="names.md")

    @derivation.section("The [B,T,C] interface")
    def interface(s):
        s.claim_shape("2×3", (2, 3), what="E[A]")
        s.claim_shape("2×3", (2, 3), what="E[A]")
        s.claim("0.5", sp.Rational(1, 2), at="Table 1", what="W::x")
        s.claim("0.25", sp.Rational(1, 4), at="Table 1", what="A_60")
''')


@pytest.fixture
def project(pytester):
    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "week08_mine.py").write_text(MODULE, encoding="utf-8")
    (pytester.path / "derivations" / "_helpers.py").write_text("X = 1\n", encoding="utf-8")
    return pytester


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One project for the tests that only run pytest on it (by node id, -k, --lf): its derivations are loaded
    and built here, once, and in-process runs reuse them (pytest keeps the modules loaded before it runs)."""
    from symseq.authoring import from_path

    root = tmp_path_factory.mktemp("project")
    (root / "derivations").mkdir()
    (root / "derivations" / "week08_mine.py").write_text(MODULE, encoding="utf-8")
    (root / "derivations" / "names.py").write_text(NAMES, encoding="utf-8")
    for d in from_path(root / "derivations"):
        [c.check() for c in d.claims]
    return root


def run(pytester, root, *args):
    """pytest in the project folder ``root``, as its author runs it there, in this process, with a cache of this
    test's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        return pytester.runpytest(f"--rootdir={root}", "-o", f"cache_dir={pytester.path / 'cache'}", *args)


def selected(result) -> list[str]:
    """The node ids of the items a ``-v`` run reports, in order."""
    return [m.group(1) for ln in result.outlines
            if (m := re.match(r"(derivations/\S.*?) (PASSED|FAILED|SKIPPED)", ln))]


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


def test_item_names_are_safe_parts_of_a_node_id(shared, pytester):
    """pytest splits a node id at "::" and reads "[...]" as parameters: no name holds either, and a name that
    would repeat is numbered, so every id is one item."""
    result = run(pytester, shared, "derivations/names.py", "--collect-only", "-q")
    ids = [ln for ln in result.outlines if ln.startswith("derivations/")]
    assert ids == ["derivations/names.py::names::The (B,T,C) interface::" + n
                   for n in ("E(A)", "E(A) (2)", "Table 1 · W: x", "Table 1 · A_60")]
    assert node_name("E[A]") == "E(A)" and node_name(" a::b \n c ") == "a: b c" and node_name("") == "claim"


@pytest.mark.parametrize("name", ["E(A)", "E(A) (2)", "Table 1 · W: x"])
def test_one_claim_runs_by_its_node_id(shared, pytester, name):
    """The id pytest prints runs that claim and no other (it was "not found" while names held "::")."""
    node = f"derivations/names.py::names::The (B,T,C) interface::{name}"
    result = run(pytester, shared, node, "-v")
    result.assert_outcomes(passed=1)
    assert selected(result) == [node]


def test_a_section_or_a_derivation_runs_by_its_node_id(shared, pytester):
    run(pytester, shared, "derivations/week08_mine.py::week08-mine::Shapes").assert_outcomes(passed=1)
    run(pytester, shared, "derivations/week08_mine.py::week08-mine").assert_outcomes(passed=3, failed=1)


def test_k_selects_by_claim_name(shared, pytester):
    result = run(pytester, shared, "-v", "-k", "A_60 or (forward and exact)")
    result.assert_outcomes(passed=2)
    assert selected(result) == ["derivations/names.py::names::The (B,T,C) interface::Table 1 · A_60",
                                "derivations/week08_mine.py::week08-mine::§4 The forward pass by hand::w, exact"]


def test_lf_reruns_only_the_failed_claim(shared, pytester):
    """--lf compares pytest's record of the last failures with the items' ids: it reran every claim while the
    names held "::"."""
    run(pytester, shared).assert_outcomes(passed=7, failed=1)
    result = run(pytester, shared, "--lf", "-v")
    result.assert_outcomes(failed=1, deselected=7)
    assert selected(result) == ["derivations/week08_mine.py::week08-mine::§4 The forward pass by hand::p(B|AB)"]
    result = run(pytester, shared, "--ff", "-v")
    result.assert_outcomes(passed=7, failed=1)
    assert selected(result)[0].endswith("::p(B|AB)")


def test_a_failure_names_the_file_and_line_that_state_the_claim(shared, pytester):
    lines = MODULE.splitlines()
    line = next(i for i, ln in enumerate(lines) if 's.claim("0.792413"' in ln)  # 0-based, as reportinfo gives it
    result = run(pytester, shared, "derivations/week08_mine.py")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([f"derivations/week08_mine.py:{line + 1}: claim 'p(B|AB)': *mismatch: printed "
                                 f"0.792413, correct 0.792412*"])
    items, _ = pytester.inline_genitems(f"--rootdir={shared}", str(shared / "derivations/week08_mine.py"))
    info = {i.name: i.reportinfo() for i in items}
    path, lineno, title = info["p(B|AB)"]
    assert (Path(path).resolve(), lineno) == ((shared / "derivations/week08_mine.py").resolve(), line)
    assert title == "[claim] week08-mine::§4 The forward pass by hand::p(B|AB)"  # the readable id heads the report
    assert info["AV"][1] == next(i for i, ln in enumerate(lines) if 's.claim_shape("4×3"' in ln)


def test_a_claim_stated_by_a_helper_points_at_the_helper(pytester):
    """The line is where the author's code states the claim: in a helper module it calls, not in symseq."""
    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "_claims.py").write_text(
        "def half(s, printed):\n    s.claim(printed, 1 / __import__('sympy').Integer(2), what='half')\n",
        encoding="utf-8")
    (pytester.path / "derivations" / "helped.py").write_text(textwrap.dedent('''
        import sys
        from pathlib import Path
        sys.path.insert(0, str(Path(__file__).parent))
        from _claims import half
        from symseq import Derivation
        derivation = Derivation("helped", title="Helped", source="h.md")

        @derivation.section("One")
        def one(s):
            half(s, "0.4")
    '''), encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["derivations/_claims.py:2: claim 'half': *0.4*mismatch*"])




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
    result.stdout.fnmatch_lines(["derivations/broken.py:7: NameError: name 'undefined_name' is not defined "
                                 "(section '§1 A typo' did not build)",
                                 "FAILED derivations/broken.py::broken::§1 A typo::build*"])


def test_a_module_that_does_not_load_is_one_collection_error_with_its_line(pytester):
    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "typo.py").write_text("from symseq import Derivation\nx = (1,\n",
                                                           encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["cannot load *typo.py (line 2): SyntaxError: *"])
    result.stdout.no_fnmatch_line("*discovery.py*")  # no traceback through symseq's loader


def test_off_by_option(project):
    project.runpytest("-q", "--no-symseq").assert_outcomes()


def test_never_on_symseqs_own_bundled_folder(pytester):
    import symseq.derivations as pkg

    folder = pkg.__path__[0]
    result = pytester.runpytest("-q", "--symseq-derivations", folder, folder)
    result.assert_outcomes()
    assert "no tests ran" in result.stdout.str()


def test_a_bundled_module_named_on_the_command_line_runs_by_node_id(pytester):
    """In symseq's own repository, ``pytest 'derivations/week07_attention.py::<id>'`` runs that one claim (the
    folder itself is still never collected: above)."""
    import symseq.derivations as pkg

    folder = Path(pkg.__path__[0])
    node = "week07-attention::The (B,T,C) interface::positions added · (B,T,C) after adding position embeddings"
    result = pytester.runpytest(f"--rootdir={folder.parent}", "-p", "no:cacheprovider", "-v",
                                f"{folder / 'week07_attention.py'}::{node}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*week07_attention.py::{node} PASSED*"])


def test_a_project_without_derivations_is_untouched(pytester):
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    pytester.runpytest("-q").assert_outcomes(passed=1)


@pytest.mark.slow  # a pytest run in two more processes
def test_pytest_xdist_collects_the_same_items_on_every_worker(pytester):
    """pytest -n 2 (a subprocess): each worker collects the derivations itself, and xdist stops when two workers
    collect differently. A small derivation with its failure and names pytest reads as syntax, and a handout of
    symseq's own copied into the project (the bundled folder itself is never collected), its section titles with
    brackets and all."""
    pytest.importorskip("xdist")
    import symseq.derivations as pkg

    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "week08_mine.py").write_text(MODULE, encoding="utf-8")
    (pytester.path / "derivations" / "names.py").write_text(NAMES, encoding="utf-8")
    shutil.copy(Path(pkg.__path__[0]) / "week07_attention.py", pytester.path / "derivations")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "xdist",
                                           "-n", "2")
    from symseq.authoring import bundled

    week07 = next(d for d in bundled() if d.name == "week07-attention")
    result.assert_outcomes(passed=7 + len(week07.claims), failed=1)  # its claims, however many the handout has
    result.stdout.fnmatch_lines(["*derivations/week08_mine.py:*: claim 'p(B|AB)': *mismatch*"])
    result.stdout.no_fnmatch_line("*Different tests were collected*")


def test_claim_names_depend_on_the_text_only():
    """Stable across runs and workers: a claim's name is made of its location and what it is, never of an
    address or a count; the printed statement names a claim that has neither."""
    from symseq.verify.claims import Claim

    c = Claim("0.5", "value", None, location="§1", what="w[0]")
    assert claim_name(c) == "w(0)"
    assert claim_name(Claim("a" * 100, "property", None, location="§1")) == "a" * 79 + "…"


# a module whose section titles and claim names hold what pytest reads as syntax: dots (pytest -v printed
# "1. One tanh step" as "1:: One tanh step"), a colon at the end of a name (followed by the separator, "Step 2:::x"
# split as "Step 2" and ":x"), brackets, "::" and runs of spaces
TITLES = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation

    derivation = Derivation("titles", title="Titles", source="titles.md")

    @derivation.section("1. One tanh step")
    def one(s):
        s.claim("0.5", sp.Rational(1, 2), what="z = w x + b")
        s.claim("0.25", sp.Rational(1, 4), what="v1.2: the mean.")

    @derivation.section("Step 2:")
    def two(s):
        s.claim("0.5", sp.Rational(1, 2), what="E[A]:")
        s.claim("0.5", sp.Rational(1, 2), at="Table 1.", what="a::b  [c]  d.e")

    @derivation.section(":: leading, and 3.5 [x]:")
    def three(s):
        s.claim("1", sp.Integer(1), what=":x")
''')


def verbose_ids(result) -> list[str]:
    """The node ids a ``pytest -v`` run prints before PASSED (each test's line as the terminal shows it)."""
    return [m.group(1) for ln in result.outlines if (m := re.match(r"(derivations/\S.*?) PASSED", ln))]


def test_the_starters_ids_printed_by_pytest_v_paste_back(pytester):
    """``symseq new`` in an empty folder, then pytest -v: each id it prints runs exactly that one test (the
    starter's section "1. One tanh step" printed as "1:: One tanh step", which pytest then did not find)."""
    from symseq.authoring import from_path
    from symseq.cli import main

    assert main(["new", "my-example", "--no-color"]) == 0
    from_path(pytester.path / "derivations")  # loaded once, before the in-process runs (as the fixture shared)
    ids = verbose_ids(pytester.runpytest("-v", "-p", "no:cacheprovider"))
    assert ids == ["derivations/my_example.py::my-example::1. One tanh step::z = w x + b",
                   "derivations/my_example.py::my-example::1. One tanh step::h = tanh(z)"]
    for node in ids:
        result = pytester.runpytest(node, "-v", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
        assert verbose_ids(result) == [node]


def test_ids_with_dots_colons_brackets_and_spaces_paste_back(pytester):
    from symseq.authoring import from_path

    pytester.mkdir("derivations")
    (pytester.path / "derivations" / "titles.py").write_text(TITLES, encoding="utf-8")
    from_path(pytester.path / "derivations")  # loaded once, before the in-process runs (as the fixture shared)
    collected = [ln for ln in pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider").outlines
                 if ln.startswith("derivations/")]
    printed = verbose_ids(pytester.runpytest("-v", "-p", "no:cacheprovider"))
    assert printed == collected and len(printed) == 5
    assert printed[2:] == ["derivations/titles.py::titles::Step 2::E(A)",
                           "derivations/titles.py::titles::Step 2::Table 1. · a: b (c) d.e",
                           "derivations/titles.py::titles::leading, and 3.5 (x)::x"]
    for node in printed:
        result = pytester.runpytest(node, "-v", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
        assert verbose_ids(result) == [node]
