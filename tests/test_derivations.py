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
