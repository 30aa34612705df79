"""The JSON of ``symseq verify --json`` and ``symseq audit --json`` follows the versioned schemas shipped in the
package (``symseq/schema/verify-2.schema.json``, ``audit-2.schema.json``; version 1 stays shipped for its readers): every bundled derivation's verify, an
audit of each seed handout, audits of worked examples with their derivations (errata, causes, notebook places),
and a derivation-free audit of every example page. The schemas fix each field's type (a value is always a list
of decimal strings with its shape, a line an int or null, a status one of a fixed set), so they must reject the
varying types the records had before version 1."""

import copy
import json
import math
from importlib import resources

import jsonschema
import pytest

from example_helpers import EXAMPLES
from symseq.audit.report import SCHEMA as AUDIT
from symseq.authoring import bundled
from symseq.cli import main
from symseq.verify.report import SCHEMA as VERIFY, verify
from test_audit import SEEDS, needs_seeds

PAGES = sorted(p for p in EXAMPLES.iterdir() if p.is_file())


def schema(name: str, version: int = 2) -> dict:
    """A schema as the installed package ships it."""
    return json.loads((resources.files("symseq") / "schema" / f"{name}-{version}.schema.json").read_text(
        encoding="utf-8"))


VALIDATORS = {name: jsonschema.Draft202012Validator(schema(name)) for name in ("verify", "audit")}


def problems(doc, name: str) -> list[str]:
    """Where ``doc`` breaks the schema ``name`` (at most five places), empty when it follows it."""
    errors = sorted(VALIDATORS[name].iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:5]]


def _cli_json(tmp_path, monkeypatch, *args) -> dict:
    """The JSON file a command writes (run in an empty folder, so no ./derivations is loaded)."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.json"
    assert main(["--no-color", *args, "--json", str(out)]) in (0, 1, 2)  # 2: a section did not build
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_schemas_are_json_schemas_that_name_their_version():
    for name, version in (("verify", VERIFY), ("audit", AUDIT)):
        s = schema(name)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["properties"]["schema"]["const"] == version and version in s["title"]
    assert (VERIFY, AUDIT) == ("symseq-verify/2", "symseq-audit/2")
    for name in ("verify", "audit"):  # version 1 is still shipped, for readers of the documents written before
        old = schema(name, 1)
        jsonschema.Draft202012Validator.check_schema(old)
        assert old["properties"]["schema"]["const"] == f"symseq-{name}/1"


@pytest.fixture(scope="module")
def verify_document():
    """The verify document of every bundled derivation, as it is written (through JSON)."""
    return json.loads(json.dumps(verify(bundled()).as_json()))


def test_every_bundled_derivation_verifies_to_the_schema(verify_document):
    doc = verify_document
    assert problems(doc, "verify") == []
    assert doc["ok"] and {r["derivation"] for r in doc["claims"]} == {d.name for d in bundled()}
    assert sum(doc["counts"].values()) == len(doc["claims"]) > 1000


def test_a_value_is_always_entries_with_their_shape(verify_document):
    for r in verify_document["claims"]:
        assert math.prod(r["shape"]) == len(r["value"]), r["id"]
        if r["kind"] == "value" and r["status"] == "ok":
            assert len(r["rounded"]) == len(r["error_units"]) == len(r["value"]) >= 1, r["id"]
    by_printed = {(r["derivation"], r["printed"]): r for r in verify_document["claims"]}
    p = by_printed[("week08-decoder", "0.792412")]  # p(B|AB), a scalar
    assert p["shape"] == [] and p["value"][0].startswith("0.7924115042487464435406355040879266414655"[:30])
    shapes = [r for r in verify_document["claims"] if r["kind"] == "shape" and r["status"] == "ok"]
    assert shapes and all(r["shape"] == [len(r["value"])] and all(v.isdigit() for v in r["value"]) for r in shapes)
    matrices = [r for r in verify_document["claims"] if len(r["shape"]) == 2 and r["shape"][0] > 1]
    assert matrices and all(isinstance(v, str) for r in matrices for v in r["value"])  # flat, row-major


def test_the_schema_rejects_the_types_that_varied_before_version_1(verify_document):
    """Before version 1 a value was a string for one claim and a (nested) list for another, ``rounded`` and
    ``error_units`` a bare item for one entry, and the file a bare list of records."""
    small = dict(verify_document, claims=verify_document["claims"][:3])
    assert problems(small, "verify") == []
    good = small["claims"][0]
    for field, bad in [("value", "0.5"), ("value", [["0.5"]]), ("value", ["0.5x"]), ("value", ["nan"]),
                       ("rounded", "0.5"), ("error_units", 0.0), ("status", "passed"), ("shape", None),
                       ("digits", "3")]:
        doc = copy.deepcopy(small)
        doc["claims"][0] = dict(good, **{field: bad})
        assert problems(doc, "verify"), (field, bad)
    assert problems(small["claims"], "verify")  # the bare list of records of before
    doc = copy.deepcopy(small)
    del doc["schema"]
    assert problems(doc, "verify")


def test_a_failing_and_a_broken_derivation_verify_to_the_schema(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "wrong.py").write_text('''
import sympy as sp
from symseq import Derivation

derivation = Derivation("wrong", title="wrong", source="wrong.txt")

@derivation.section("1 values")
def values(s):
    s.claim("0.6", sp.Rational(1, 2), what="a half")
    s.claim("[0.5, 0.26]", sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 4)]]), what="a row")
    s.claim_shape("2×3", (2, 2), what="a shape")

@derivation.section("2 broken")
def broken(s):
    raise ValueError("no such weight")
''')
    doc = _cli_json(tmp_path, monkeypatch, "verify", "--no-bundled", "--path", str(tmp_path / "mine"))
    assert problems(doc, "verify") == []
    assert not doc["ok"] and [r["status"] for r in doc["claims"]] == ["mismatch", "mismatch", "mismatch"]
    half, row, shape = doc["claims"]
    assert half["value"] == ["0.5000000000000000000000000000000000000000"] and half["rounded"] == ["0.5"]
    assert row["shape"] == [1, 2] and row["error_units"] == [0.0, 1.0]
    assert shape["value"] == ["2", "2"] and shape["shape"] == [2]
    assert doc["broken_sections"][0]["section"] == "2 broken"


@needs_seeds
@pytest.mark.parametrize("seed", [pytest.param(p, marks=[pytest.mark.slow] if p.name.startswith("004") else [])
                                  for p in (sorted(SEEDS.glob("*.txt")) if SEEDS.is_dir() else [])],
                         ids=lambda p: p.name[:3])  # Week 06 (004), the longest, with -m slow
def test_the_audit_of_each_seed_follows_the_schema(seed, tmp_path, monkeypatch):
    doc = _cli_json(tmp_path, monkeypatch, "audit", str(seed))
    assert problems(doc, "audit") == []
    assert doc["mode"] == "derivations" and doc["derivations"] and doc["tokens"]


@pytest.mark.parametrize("page", ["rnn-bptt-numpy-notebook.md", "self-attention-journey-notebook.ipynb"])
def test_an_audit_with_errata_and_places_follows_the_schema(page, tmp_path, monkeypatch):
    doc = _cli_json(tmp_path, monkeypatch, "audit", str(EXAMPLES / page), "--path", str(EXAMPLES / "derivations"))
    assert problems(doc, "audit") == []
    assert doc["mode"] == "derivations"
    if page.endswith(".md"):
        assert doc["errata"] and len(doc["causes"]) == len(doc["errata"])
    else:
        assert all("where" in t for t in doc["tokens"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_derivation_free_audit_of_each_example_page_follows_the_schema(page, tmp_path, monkeypatch):
    doc = _cli_json(tmp_path, monkeypatch, "audit", str(page))
    assert problems(doc, "audit") == []
    assert doc["mode"] == "arithmetic" and doc["derivations"] == [] and doc["by_derivation"] == {}
    assert doc["summary"]["quantity"] == sum(t["class"] in ("covered", "wrong", "uncovered") for t in doc["tokens"])
    for t in doc["tokens"]:
        assert math.prod(t["shape"]) == len(t["entries"]) or t["kind"] == "shape", t


def test_the_audit_schema_rejects_a_line_that_is_not_an_int(tmp_path, monkeypatch):
    doc = _cli_json(tmp_path, monkeypatch, "audit", str(EXAMPLES / "softmax-ce-backward-lab.md"))
    for bad in ("12", 0, 1.5):
        wrong = copy.deepcopy(doc)
        wrong["statements"][0]["line"] = bad
        assert problems(wrong, "audit"), bad
    wrong = copy.deepcopy(doc)
    wrong["statements"][0]["status"] = "fine"
    assert problems(wrong, "audit")
    wrong = dict(doc, mode="derivations")  # the statements are the page-only audit's
    assert problems(wrong, "audit")
