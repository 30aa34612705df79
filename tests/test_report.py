"""The verification report (verify/report.py): each claim decided once, the verdict, records and progress."""

import sympy as sp

from symseq import Derivation
from symseq.verify.report import verify


def _derivation(printed_y="0.5", broken=False):
    d = Derivation("t-report", title="t", source="t.txt")

    @d.section("§1 values")
    def one(s):
        L = s.ledger()
        y = L.define("y", 2 * L.input("x", "0.25"))
        s.claim(printed_y, y, what="y")
        s.claim("1/√2", sp.sqrt(2) / 2, what="a constant")

    @d.section("§2 a section that does not build")
    def two(s):
        if broken:
            raise ValueError("no such weight")

    @d.section("§3 needs a package that is not installed", requires=["no_such_package_xyz"])
    def three(s):
        pass

    return d


def test_the_verdict_and_counts_come_from_the_report():
    good = verify([_derivation()], 30)
    assert good.ok and good.counts == {"ok": 2, "mismatch": 0, "error": 0, "skipped": 0}
    assert [s.title for _, s in good.skipped] == ["§3 needs a package that is not installed"]
    assert all(c.result.method in ("30 digits", "exact") for c in good.claims)
    bad = verify([_derivation("0.6")], 30)
    assert not bad.ok and [c.what for c in bad.failures] == ["y"] and bad.counts["mismatch"] == 1
    broken = verify([_derivation(broken=True)], 30)
    assert not broken.ok and not broken.failures and [s.title for _, s in broken.broken] == [
        "§2 a section that does not build"]


def test_the_json_document_has_one_record_per_claim_and_one_per_broken_section():
    doc = verify([_derivation("0.6", broken=True)], 30).as_json()
    assert doc["schema"] == "symseq-verify/2" and doc["ok"] is False and doc["dps"] == 30
    assert doc["counts"] == {"ok": 1, "mismatch": 1, "error": 0, "skipped": 0}
    rec = doc["claims"]
    assert [r["status"] for r in rec] == ["mismatch", "ok"]
    assert rec[0]["location"] == "§1 values" and rec[0]["rounded"] == ["0.5"]
    (broken,) = doc["broken_sections"]
    assert broken["section"] == "§2 a section that does not build" and "no such weight" in broken["message"]


def test_progress_is_reported_before_each_step_and_at_the_end():
    calls = []
    verify([_derivation()], 30, progress=lambda *a: calls.append(a))
    assert calls[0] == ("building", 0, 1, "t-report") and calls[1] == ("building", 1, 1, "")
    assert [c[1] for c in calls if c[0] == "checking"] == [0, 1, 2]


def test_a_report_of_some_sections_decides_only_their_claims():
    d = _derivation("0.6")
    (first,) = [s for s in d.sections if s.title.startswith("§1")]
    r = verify([d], 30, sections=[first])
    assert len(r.claims) == 2 and not r.ok
    assert verify([d], 30, sections=[s for s in d.sections if s.title.startswith("§3")]).claims == []


def test_fragile_roundings_are_reported_not_failed():
    d = Derivation("t-fragile", title="t", source="t.txt")

    @d.section("§1 a value a hair above a rounding boundary")
    def one(s):
        L = s.ledger()
        s.claim("0.0315", L.define("z", L.input("x", "0.031450001") * 1), what="z")
        s.claim("0.5", L.define("h", L.input("u", "0.25") * 2), what="h")

    report = verify([d], 30)
    assert report.ok
    assert [(c.what, note.split(";")[-1].strip()) for c, note in report.fragile] == [
        ("z", "float32 prints 0.0314, float64 prints 0.0315")]
    from symseq.present.terminal import fragile_notes, summary

    assert fragile_notes(report)[0].startswith("NOTE t.txt · §1 a value a hair above a rounding boundary · z: ")
    assert summary(report).endswith("2 ok, 1 printed decimal(s) within 1% of a rounding boundary (noted above)")


def test_a_derivation_that_states_no_claim_fails_instead_of_passing():
    from symseq import Derivation
    from symseq.present.terminal import problems, summary
    from symseq.verify.report import verify

    d = Derivation("empty-page", source="page.md", title="A page")

    @d.section("Step 1")
    def step(s):
        s.note("nothing claimed yet")

    report = verify([d])
    assert not report.ok and report.unclaimed == [d] and not report.claims  # was: "0 claims …: 0 ok", exit 0
    assert problems(report) == ["EMPTY empty-page: it states no claim, so nothing of page.md was checked; claim "
                                "each number the page prints (s.claim, s.given, s.step)"]
    assert summary(report).endswith("1 derivation(s) state no claim")
