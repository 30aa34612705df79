"""Seed 004 (Week 06): comparisons it states in words, claimed by week06-rnn and week06-encoder with ``near=``.

Each case flips the comparison word of one sentence in a copy of the seed (below ↔ above, largest ↔ smallest …):
the audit against both derivations must then fail and expect the claim at that line, while the claim's own check
holds on the real derivation. The seeds are read as in ``test_audit`` (in CI a missing seed fails).
"""

import pytest

from test_audit import DERIVATIONS, SEEDS, W6, _audit, needs_seeds
from test_claim_words import _flip

NAMES = ["week06-rnn", "week06-encoder"]

# (derivation, line, comparison word, the claim's statement): one flip per case; an audit of the flipped page
# takes some seconds, so half of the cases run with the slow ones
SLOW = pytest.mark.slow
CASES = [
    ("week06-rnn", 240, "decreases", "a small negative-gradient step decreases the loss"),
    ("week06-rnn", 342, "below", "a norm below one at every step shrinks every direction along a long path"),
    ("week06-encoder", 708, "largest", "after the shift the largest exponent is zero and every other one is negative"),
    ("week06-encoder", 753, "negative",
     "scores can be negative and are no probabilities: a row of S does not sum to one"),
    pytest.param("week06-rnn", 190, "more", "an earlier use passes through more recurrent transitions than a later one",
                 marks=SLOW),
    pytest.param("week06-rnn", 216, "negative",
                 "ReLU passes the signal at a positive preactivation and cuts it at a negative one", marks=SLOW),
    pytest.param("week06-rnn", 400, "below",
                 "forget values below one attenuate a long direct path: diag(f_t) multiplied over many steps",
                 marks=SLOW),
    pytest.param("week06-encoder", 979, "below",
                 "the variance of every normalized row is slightly below one", marks=SLOW),
]
IDS = [f"{v[1]}-{v[2]}" for v in (getattr(c, "values", c) for c in CASES)]


@pytest.fixture(scope="module")
def derivations():
    """week06-rnn and week06-encoder (the audit's own objects: their sections built once), by name."""
    ds = {d.name: d for d in DERIVATIONS if d.name in NAMES}
    for d in ds.values():
        d.sections  # noqa: B018 - builds the sections
    return ds


@needs_seeds
@pytest.mark.parametrize("name, line, word, statement", CASES, ids=IDS)
def test_a_flipped_comparison_word_of_week06_fails_the_audit_at_its_line(name, line, word, statement, derivations,
                                                                         tmp_path):
    (claim,) = [c for c in derivations[name].claims if c.printed == statement]
    held, detail = claim.quantity()  # the check itself, on the derivation's ledgers
    assert held is True, detail
    assert claim.check().status == "ok"
    assert word.lower() in claim.near.lower()
    # the unedited page passes, and this claim is the one that checks the word
    clean = _audit(SEEDS / W6, NAMES)
    assert not clean.failed and clean.errata == [] and clean.missing == []
    (by,) = [by for c, by in clean.comparisons if c.line == line and c.word == word]
    assert by is not None and by.startswith(f"{name}::")
    # the word flipped: the audit fails, expecting this claim at that line
    path, text = _flip(W6, line, word, tmp_path)
    flipped = _audit(path, NAMES)
    assert flipped.failed and flipped.errata == []
    assert [(m.printed, list(m.lines)) for m in flipped.missing] == [(statement, [line, line])], text


@needs_seeds
def test_week06_comparisons_decided_by_its_numbers_are_checked():
    """The comparisons of seed 004 that a computation of its sections decides, each checked by a claim."""
    rep = _audit(SEEDS / W6, NAMES)
    checked = {(c.line, c.word) for c, by in rep.comparisons if by is not None}
    assert {(152, "same"), (178, "larger"), (202, "above"), (202, "lower"), (216, "Positive"), (220, "above"),
            (240, "increase"), (336, "above"), (338, "largest"), (342, "above"), (558, "same"), (558, "different"),
            (576, "same"), (576, "different"), (708, "same"), (739, "negative"), (1007, "same"),
            (1007, "different"), (1171, "same"), (1173, "same"), (1298, "below")} <= checked
