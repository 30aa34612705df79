"""Every claim of every bundled derivation holds (one test per derivation, naming each claim that does not).

The derivations are built once per session, by the first test that needs them (the ``built`` fixture), not while
collecting. One item per claim, named by derivation, section and claim: ``python -m pytest derivations`` (symseq's
pytest plugin).
"""

import pytest

from symseq.verify.claims import describe
from symseq.authoring import bundled

NAMES = [d.name for d in bundled()]  # the modules are imported, nothing is built


@pytest.fixture(scope="module")
def derivations(built):
    return list(built.values())


def test_every_section_builds(derivations):
    broken = [(d.name, s.title, s.error.splitlines()[0]) for d in derivations for s in d.sections if s.error]
    assert not broken, broken


@pytest.mark.parametrize("name", NAMES)
def test_every_claim_holds(name, built):
    claims = built[name].claims
    assert claims, name
    results = [(c, c.check()) for c in claims]
    wrong = [describe(c) for c, r in results if r.status not in ("ok", "skipped")]
    assert not wrong, f"{len(wrong)} of {len(claims)} claims of {name} do not hold:\n" + "\n".join(wrong)
    skipped = sorted({r.message for c, r in results if r.status == "skipped"})
    if skipped:
        pytest.skip(f"{len(claims) - sum(r.status == 'ok' for c, r in results)} of {len(claims)} claims of {name} "
                    f"skipped (every other one holds): {'; '.join(skipped)}")


def test_week8_has_at_least_thirty_numeric_claims(derivations):
    d = [d for d in derivations if d.name == "week08-decoder"][0]
    numeric = [c for c in d.claims if c.kind == "value"]
    assert len(numeric) >= 30


@pytest.mark.parametrize("name,minimum,numeric", [("handout11-self-attention", 130, 50), ("week07-attention", 70, 30)])
def test_attention_handouts_are_covered(name, minimum, numeric, built):
    d = built[name]
    assert len(d.claims) >= minimum
    assert len([c for c in d.claims if c.kind == "value"]) >= numeric
    assert all(c.location for c in d.claims)


def test_handout11_mean_loss_is_the_printed_one(built):
    d = built["handout11-self-attention"]
    (claim,) = [c for c in d.claims if c.printed == "3.02041"]
    assert claim.check().ok and claim.check().values[0].startswith("3.020410229")


@pytest.mark.slow  # builds every derivation again, in a process of its own
def test_no_verdict_depends_on_mpmaths_global_precision():
    """An author's code may set mpmath.mp.dps; every claim is decided at its own precision all the same. At a
    global 30 digits Week 06's bound r > 1 (which holds with equality) used to fail. Run in a fresh process, since
    the derivations here are built once."""
    import json
    import subprocess
    import sys

    script = ("import json, mpmath; mpmath.mp.dps = 30\n"
              "from symseq.authoring import bundled\nfrom symseq.verify.report import verify\n"
              "verify(bundled())\n"
              "print(json.dumps({c.id: c.result.status for d in bundled() for c in d.claims}))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    statuses = json.loads(out.splitlines()[-1])
    assert statuses == {c.id: c.check().status for d in bundled() for c in d.claims}
    assert set(statuses.values()) == {"ok"}, [k for k, v in statuses.items() if v != "ok"]
