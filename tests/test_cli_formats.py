"""``--output-format text|json|github|junit`` of ``symseq verify`` and ``symseq audit``: GitHub workflow annotations
at the handout's file and line, escaped as GitHub's runner reads them; JUnit XML with one test case per claim (or
per checked statement and erratum); the JSON document on standard output, following its schema (version 2, which
records the sections not checked)."""

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from symseq.cli import main
from symseq.present.ci import annotation, escape_data, escape_property
from test_json_schema import problems

PAGE = """# Mine

## 1 values

A half is 0.6 here.

A quarter is 0.25.
"""

DERIVATION = '''
import sympy as sp
from symseq import Derivation

derivation = Derivation("mine", title="mine", source="page.md")

@derivation.section("1 values")
def values(s):
    s.claim("0.6", sp.Rational(1, 2), what="a half")
    s.claim("0.25", sp.Rational(1, 4), what="a quarter")

@derivation.section("2 needs a package", requires=["no_such_package_for_symseq"])
def later(s):
    s.claim("1", sp.Integer(1), what="one")
'''

RIGHT = """# A tanh step by hand

## 1. One tanh step

Take x = 0.5, w = 0.8 and b = 0.1.

z = w x + b = 0.8 · 0.5 + 0.1 = 0.5

h = tanh(0.5) = 0.4621
"""
WRONG = RIGHT + "\nThe scores are 2 and 3, so 2 · 3 + 1 = 8.\n"  # line 11: 2 · 3 + 1 is 7


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with a page and its derivation (one claim wrong, one right, one section needing a package that is
    not installed), as an author keeps them; the current folder."""
    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "mine.py").write_text(DERIVATION, encoding="utf-8")
    (tmp_path / "page.md").write_text(PAGE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYMSEQ_NO_CACHE", "1")
    return tmp_path


@pytest.fixture
def pages(tmp_path, monkeypatch):
    """Two pages no derivation speaks of, one right and one with a wrong sum on line 11; the current folder."""
    (tmp_path / "right.md").write_text(RIGHT, encoding="utf-8")
    (tmp_path / "wrong.md").write_text(WRONG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["--no-color", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- escaping ------------------------------------------------------------------------------------------------------

def test_workflow_commands_are_escaped_as_github_reads_them():
    assert escape_data("50% of a\r\nb: c, d") == "50%25 of a%0D%0Ab: c, d"
    assert escape_property("50% of a\r\nb: c, d") == "50%25 of a%0D%0Ab%3A c%2C d"
    assert annotation("x: 1,\n2", file="notes/a,b: c.md", line=7, title="t: u") == \
        "::error file=notes/a%2Cb%3A c.md,line=7,title=t%3A u::x: 1,%0A2"
    assert annotation("only a message") == "::error::only a message"


# --- verify --------------------------------------------------------------------------------------------------------

def test_verify_github_gives_one_error_at_the_line_that_prints_the_wrong_claim(project, capsys):
    code, out, err = run(capsys, "verify", "--no-bundled", "--output-format", "github")
    assert code == 1 and err == ""
    (line,) = out.splitlines()
    assert line.startswith("::error file=page.md,line=5,title=symseq verify%3A mismatch 0.6::1 values · a half: ")
    assert "0.5" in line.split("::", 2)[2]


def test_verify_github_is_silent_when_every_claim_holds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no ./derivations here
    code, out, err = run(capsys, "verify", "week08-decoder", "--output-format", "github")
    assert (code, out) == (0, "")


def test_verify_junit_has_one_test_case_per_claim(project, capsys):
    code, out, _ = run(capsys, "verify", "--no-bundled", "--output-format", "junit")
    assert code == 1 and out.startswith('<?xml version="1.0" encoding="utf-8"?>')
    root = ET.fromstring(out)
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == \
        {"tests": "3", "failures": "1", "errors": "0", "skipped": "1"}
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"2 needs a package", "mine::1 values::a half", "mine::1 values::a quarter"}
    half = cases["mine::1 values::a half"]
    assert half.find("failure").get("message") == "printed 0.6" and half.get("line") == "5"
    assert half.get("file") == "page.md" and half.get("classname") == "mine.1 values"
    assert cases["mine::1 values::a quarter"].find("failure") is None
    assert "no_such_package_for_symseq" in cases["2 needs a package"].find("skipped").get("message")


def test_verify_json_on_stdout_records_the_sections_not_checked(project, capsys):
    code, out, _ = run(capsys, "verify", "--no-bundled", "--output-format", "json")
    doc = json.loads(out)
    assert code == 1 and problems(doc, "verify") == []
    assert doc["schema"] == "symseq-verify/2" and doc["complete"] is False
    assert doc["counts"] == {"ok": 1, "mismatch": 1, "error": 0, "skipped": 0}
    (skipped,) = doc["skipped_sections"]
    assert skipped["derivation"] == "mine" and skipped["section"] == "2 needs a package"
    assert skipped["source"] == "page.md" and "no_such_package_for_symseq" in skipped["reason"]


def test_verify_json_of_a_full_run_is_complete(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "verify", "week08-decoder", "--output-format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["complete"] is True and doc["skipped_sections"] == []
    assert problems(doc, "verify") == []


def test_the_json_file_and_another_format_together(project, capsys):
    code, out, _ = run(capsys, "verify", "--no-bundled", "--output-format", "github", "--json", "claims.json")
    assert code == 1 and out.startswith("::error file=page.md,line=5,")
    assert json.loads((project / "claims.json").read_text())["counts"]["mismatch"] == 1


def test_json_on_stdout_twice_is_refused(project, capsys):
    code, out, err = run(capsys, "verify", "--no-bundled", "--output-format", "junit", "--json", "-")
    assert code == 2 and out == ""
    assert "--json - and --output-format junit would both write to standard output" in err


# --- audit ---------------------------------------------------------------------------------------------------------

def test_audit_github_gives_one_error_per_erratum_at_its_file_and_line(pages, capsys):
    code, out, err = run(capsys, "audit", "right.md", "wrong.md", "--output-format", "github")
    assert code == 1 and err == ""
    (line,) = out.splitlines()
    assert line.startswith("::error file=wrong.md,line=11,title=symseq audit%3A wrong number 8::printed 8, correct 7")
    assert "2 · 3 + 1 = 8" in line


def test_audit_github_names_the_file_as_given(pages, capsys):
    (pages / "notes").mkdir()
    (pages / "wrong.md").rename(pages / "notes" / "wrong.md")
    code, out, _ = run(capsys, "audit", str(pages / "notes" / "wrong.md"), "--output-format", "github")
    assert code == 1 and out.startswith("::error file=notes/wrong.md,line=11,")


def test_audit_of_a_right_page_passes_silently_in_github_format(pages, capsys):
    assert run(capsys, "audit", "right.md", "--output-format", "github")[:2] == (0, "")


def test_audit_junit_has_a_case_per_checked_statement_and_erratum(pages, capsys):
    code, out, _ = run(capsys, "audit", "right.md", "wrong.md", "--output-format", "junit")
    root = ET.fromstring(out)
    assert code == 1 and [s.get("name") for s in root.findall("testsuite")] == ["right.md", "wrong.md"]
    right, wrong = root.findall("testsuite")
    assert (right.get("tests"), right.get("failures")) == ("2", "0")
    assert (wrong.get("tests"), wrong.get("failures")) == ("3", "1")
    (failed,) = [c for c in wrong.findall("testcase") if c.find("failure") is not None]
    assert failed.get("line") == "11" and failed.find("failure").get("message") == "printed 8, correct 7"
    assert sorted(c.get("line") for c in right.findall("testcase")) == ["7", "9"]


def test_audit_json_on_stdout_follows_the_schema(pages, capsys):
    code, out, _ = run(capsys, "audit", "wrong.md", "--output-format", "json")
    doc = json.loads(out)
    assert code == 1 and problems(doc, "audit") == []
    assert doc["schema"] == "symseq-audit/2" and doc["skipped_sections"] == []
    assert [(e["line"], e["printed"], e["correct"]) for e in doc["errata"]] == [(11, "8", "7")]


def test_one_json_document_is_for_one_file(pages, capsys):
    code, out, err = run(capsys, "audit", "right.md", "wrong.md", "--output-format", "json")
    assert code == 2 and out == "" and "one document for one FILE" in err


def test_the_audit_json_records_the_sections_not_checked(project, capsys):
    code, out, _ = run(capsys, "audit", "page.md", "--output-format", "json")
    doc = json.loads(out)
    assert problems(doc, "audit") == []
    assert doc["skipped_sections"] == [{"derivation": "mine", "section": "2 needs a package",
                                        "reason": doc["skipped_sections"][0]["reason"]}]
    assert "no_such_package_for_symseq" in doc["skipped_sections"][0]["reason"]
    assert [(e["line"], e["printed"]) for e in doc["errata"]] == [(5, "0.6")]


def test_an_audit_against_a_derivation_annotates_the_wrong_claim(project, capsys):
    code, out, _ = run(capsys, "audit", "page.md", "--output-format", "github")
    (line,) = out.splitlines()
    assert code == 1 and line.startswith("::error file=page.md,line=5,title=symseq audit%3A wrong number 0.6::"
                                         "printed 0.6, correct 0.5")


def test_the_version_2_schemas_reject_a_document_without_the_new_fields(project, capsys):
    doc = json.loads(run(capsys, "verify", "--no-bundled", "--output-format", "json")[1])
    for field in ("complete", "skipped_sections"):
        assert problems({k: v for k, v in doc.items() if k != field}, "verify")
    with pytest.raises(jsonschema.ValidationError):
        from test_json_schema import VALIDATORS

        VALIDATORS["verify"].validate(dict(doc, schema="symseq-verify/1"))
