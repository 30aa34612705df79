"""Comparisons the seed handouts state in words, claimed by their derivations with ``near=``.

A sentence such as "with a positive regulator the squared norm is smaller" is a claim of its section whose
``near=`` quotes the comparison word: flipping that word in the page (smaller → larger) must fail the audit at
that line, and the claim's own check must hold on the real derivation. The seeds are read from
``$SYMSEQ_SEEDS`` or ``../shared/seeds`` (see ``test_audit``; in CI a missing seed fails).
"""

import json

import pytest

from symseq.audit.words import comparisons
from symseq.authoring import bundled
from symseq.cli import main
from symseq.read.document import read
from test_audit import SEEDS, needs_seeds

W8, H11, W7 = "000_30e9e4099f2cd2dc.txt", "001_d42a515eb3cd140c.txt", "003_b76f00753924d0c1.txt"

# (seed, derivation, line, comparison word, the claim's statement): one flip per case
CASES = [
    (W8, "week08-decoder", 76, "smaller",
     "with a positive regulator the squared norm of the normalized row is smaller than without one"),
    (W8, "week08-decoder", 58, "negative",
     "the softmax over positions is a Boltzmann average with the negative scores as energies"),
    (W8, "week08-decoder", 168, "different",
     "the two softmaxes run over different index sets: positions for A, token labels for P"),
    (H11, "handout11-self-attention", 19, "same",
     "compatible queries and keys must have the same width: q · k needs equal widths"),
    (H11, "handout11-self-attention", 97, "largest",
     "greedy decoding selects the largest logit: the most probable token is the one of largest logit"),
    (W7, "week07-attention", 33, "Positive",
     "positive scaling preserves the row's ordering: the larger score keeps the larger weight"),
    (W7, "week07-attention", 59, "same",
     "the weights need the same number of entries as the scores, head by head"),
    (W8, "week08-decoder", 60, "different",
     "each head has projections of its own: no entry of head 1's W_Q, W_K, W_V is one of head 2's"),
]


@pytest.fixture(scope="module")
def derivations():
    """The three derivations of these seeds, built once (their sections and claims), by name."""
    names = {case[1] for case in CASES}
    ds = {d.name: d for d in bundled() if d.name in names}
    for d in ds.values():
        d.sections  # noqa: B018 - builds the sections
    return ds


def _claim(derivations, name: str, statement: str):
    (claim,) = [c for c in derivations[name].claims if c.printed == statement]
    return claim


def _flip(seed: str, line: int, word: str, tmp_path):
    """The seed with the comparison ``word`` of ``line`` flipped (larger ↔ smaller …) as the audit reads it, in a
    file of ``tmp_path``; returns (path, the flipped line)."""
    doc = read(SEEDS / seed)
    (c,) = [c for c in comparisons(doc) if c.line == line and c.word == word and c.use == "statement"]
    lines = (SEEDS / seed).read_text(encoding="utf-8").split("\n")
    old = lines[line - 1]
    assert old[c.start:c.end] == word
    lines[line - 1] = old[:c.start] + c.flipped + old[c.end:]
    path = tmp_path / seed
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, lines[line - 1]


def _audit_json(path, name: str, out) -> tuple[int, dict]:
    status = main(["--no-color", "audit", str(path), "--derivation", name, "--json", str(out), "--force"])
    return status, json.loads(out.read_text(encoding="utf-8"))


@needs_seeds
@pytest.mark.parametrize("seed, name, line, word, statement", CASES, ids=[f"{c[0][:3]}-{c[2]}" for c in CASES])
def test_a_flipped_comparison_word_fails_the_audit_at_its_line(seed, name, line, word, statement, derivations,
                                                               tmp_path, capsys):
    claim = _claim(derivations, name, statement)
    held, detail = claim.quantity()  # the check itself, on the derivation's ledgers
    assert held is True, detail
    assert claim.check().status == "ok"
    assert word.lower() in claim.near.lower()
    # the unedited page: the audit passes and names this claim as the one that checks the word
    status, clean = _audit_json(SEEDS / seed, name, tmp_path / "clean.json")
    assert status == 0 and clean["missing"] == [] and clean["errata"] == []
    (by,) = [c["checked_by"] for c in clean["comparisons"] if c["line"] == line and c["word"] == word]
    assert by is not None and by.startswith(f"{name}::")
    # the word flipped: the audit fails, and the claim it misses is expected at that line
    path, text = _flip(seed, line, word, tmp_path)
    capsys.readouterr()
    status, flipped = _audit_json(path, name, tmp_path / "flipped.json")
    assert status == 1 and flipped["failed"]
    assert flipped["errata"] == []
    assert [(m["printed"], m["lines"]) for m in flipped["missing"]] == [(statement, [line, line])], text


@needs_seeds
def test_the_comparisons_left_unclaimed_are_the_ones_no_quantity_decides(tmp_path):
    """Each seed's comparisons in words that no claim checks: the conceptual sentences, listed by line."""
    unchecked = {}
    for seed, name in ((W8, "week08-decoder"), (H11, "handout11-self-attention"), (W7, "week07-attention")):
        status, rep = _audit_json(SEEDS / seed, name, tmp_path / f"{seed}.json")
        assert status == 0
        unchecked[seed[:3]] = [(c["line"], c["word"]) for c in rep["comparisons"] if c["checked_by"] is None]
    assert unchecked == {"000": [(38, "same")],
                         "001": [(3, "larger"), (31, "more"), (55, "same")],
                         "003": [(51, "different")]}
