"""Every claim of every bundled derivation holds (one test per claim, named by derivation and location)."""

import pytest

from symseq.verify.claims import describe
from symseq.authoring import bundled

DERIVATIONS = bundled()
CLAIMS = [c for d in DERIVATIONS for c in d.claims]


def test_every_section_builds():
    broken = [(d.name, s.title, s.error.splitlines()[0]) for d in DERIVATIONS for s in d.sections if s.error]
    assert not broken, broken


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim(claim):
    r = claim.check()
    if r.status == "skipped":
        pytest.skip(r.message)
    assert r.status == "ok", describe(claim)


def test_week8_has_at_least_thirty_numeric_claims():
    d = [d for d in DERIVATIONS if d.name == "week08-decoder"][0]
    numeric = [c for c in d.claims if c.kind == "value"]
    assert len(numeric) >= 30


@pytest.mark.parametrize("name,minimum,numeric", [("handout11-self-attention", 130, 50), ("week07-attention", 70, 30)])
def test_attention_handouts_are_covered(name, minimum, numeric):
    d = [d for d in DERIVATIONS if d.name == name][0]
    assert len(d.claims) >= minimum
    assert len([c for c in d.claims if c.kind == "value"]) >= numeric
    assert all(c.location for c in d.claims)


def test_handout11_mean_loss_is_the_printed_one():
    d = [d for d in DERIVATIONS if d.name == "handout11-self-attention"][0]
    (claim,) = [c for c in d.claims if c.printed == "3.02041"]
    assert claim.check().ok and claim.check().values[0].startswith("3.020410229")


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
