"""symseq audit over the seed handouts: coverage, one changed digit reported exactly, the CLI and its JSON.

The seeds are found beside the project (``../shared/seeds`` from the repository
root, as in CI) or at ``$SYMSEQ_SEEDS``.
"""

import functools
import json
import os
from pathlib import Path

import pytest

from symseq.audit import AuditError, audit_file, digit_fault, for_source, parse
from symseq.audit.attribution import Attribution, Unchecked
from symseq.read.sections import normalise, score
from symseq.cli import main
from symseq.authoring import bundled


def seeds_dir() -> Path:
    env = os.environ.get("SYMSEQ_SEEDS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "seeds"


SEEDS = seeds_dir()
W8, W6, W7 = "000_30e9e4099f2cd2dc.txt", "004_daeab95066cb0286.txt", "003_b76f00753924d0c1.txt"
H11 = "001_d42a515eb3cd140c.txt"
# The derivations each seed needs: None = any derivation whose source is the seed (Handout #11 / Week 7).
EXPECTED = {W8: ["week08-decoder"], H11: None, W7: None,
            W6: ["week06-rnn", "week06-encoder"]}
DERIVATIONS = bundled()
NAMES = {d.name for d in DERIVATIONS}

# In CI the seeds are beside the clone: there a missing folder fails these tests instead of skipping them.
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir() and not os.environ.get("CI"),
                                 reason=f"the seed handouts are not at {SEEDS} (set SYMSEQ_SEEDS)")


def test_the_seeds_are_there_in_ci():
    """With CI set, the seed handouts must be found: their audit tests may not skip."""
    if not os.environ.get("CI"):
        pytest.skip("checks that the seed handouts are found when CI is set; CI is not set")
    assert SEEDS.is_dir(), f"CI is set but the seed handouts are not at {SEEDS}"
    assert all((SEEDS / name).is_file() for name in EXPECTED), sorted(p.name for p in SEEDS.iterdir())


def _missing(seed: str) -> str:
    want = EXPECTED[seed]
    if want is None:
        return "" if for_source(seed, DERIVATIONS) else "no bundled derivation has this seed as its source yet"
    absent = [n for n in want if n not in NAMES]
    return f"{', '.join(absent)} not bundled yet" if absent else ""


# Seeds whose derivations do not yet reach the 5% target (their coverage is being raised).
BELOW_TARGET: dict = {}


def _param(seed, slow=()):
    why = _missing(seed)
    marks = [pytest.mark.xfail(reason=f"{why}: turns green once merged", strict=True)] if why else []
    if seed in BELOW_TARGET:
        marks = [pytest.mark.xfail(reason=f"below the coverage target: {BELOW_TARGET[seed]}", strict=True)]
    if seed in slow:
        marks.append(pytest.mark.slow)
    return pytest.param(seed, marks=marks, id=seed[:3])


def _audit(path, names=None, fmt=None):
    """The audit of ``path`` against the derivations ``names`` (by default those whose source it is); that of a seed
    itself, unchanged, is made once and shared by the tests that read it."""
    if Path(path).parent == SEEDS:
        return _audit_seed(Path(path).name, tuple(names or ()), fmt)
    ds = [d for d in DERIVATIONS if d.name in names] if names else for_source(path, DERIVATIONS)
    return audit_file(path, ds, fmt=fmt)


@functools.lru_cache(maxsize=None)
def _audit_seed(seed, names, fmt):
    ds = [d for d in DERIVATIONS if d.name in names] if names else for_source(seed, DERIVATIONS)
    return audit_file(SEEDS / seed, ds, fmt=fmt)


@needs_seeds
@pytest.mark.parametrize("seed", [_param(s) for s in EXPECTED])
def test_seed_coverage(seed, record_property):
    """Each seed: at most 5% of its quantity tokens uncovered, each listed by line; no number wrong.

    (Claims missing from the text are listed by the report but do not fail a seed: they are the
    derivation's statements that the handout does not print.)
    """
    assert not _missing(seed), _missing(seed)
    rep = _audit(SEEDS / seed)
    c = rep.counts
    record_property("coverage", c.as_dict())
    print(f"{seed}: {c.as_dict()}")
    unc = rep.uncovered()
    assert all(t.line >= 1 and t.context for t in unc)
    assert c.quantity > 0 and c.uncovered <= 0.05 * c.quantity, [(t.line, t.text) for t in unc]
    assert rep.errata == []


@needs_seeds
def test_week08_seed_is_fully_covered():
    rep = _audit(SEEDS / W8)
    c = rep.counts
    assert c.quantity >= 50 and (c.covered, c.uncovered, c.wrong, c.reported) == (c.quantity, 0, 0, 0)
    # "position 1 has only itself accessible, so its attention weight is one": the weight is the word, 1 a label
    line108 = [(t.text, t.attribution.verdict) for t in rep.tokens if t.line == 108]
    assert line108 == [("\\sqrt{2}", "covered"), ("1", "structural"), ("2", "structural"), ("1", "structural")]


@needs_seeds
def test_week06_encoder_part_of_its_seed():
    """The encoder's part of seed 004 (its located sections) reaches the target on this branch already."""
    rep = _audit(SEEDS / W6, ["week06-encoder"])
    assert rep.spans["week06-encoder"][0][0] == 466  # "Turn the completion into a sequence of token IDs"
    c = rep.counts_for("week06-encoder")
    assert c.uncovered <= 0.05 * c.quantity, c.as_dict()
    assert c.reported >= 30 and rep.errata == [] and rep.missing == []
    reported = {t.line for t in rep.tokens if t.attribution.verdict == "reported"}
    assert set(range(1294, 1297)) <= reported  # Table 34 rows (its header is structural)


@needs_seeds
def test_week06_seed_is_fully_covered_and_passes():
    """Seed 004: every quantity token covered, nothing missing (exercise 2's own answers are declared
    ``in_text=False``, and are not looked for)."""
    rep = _audit(SEEDS / W6)
    c = rep.counts
    assert (c.quantity, c.covered, c.uncovered, c.wrong, c.reported) == (884, 884, 0, 0, 34)
    assert c.structural == 939
    assert all(rep.counts_for(n).uncovered == 0 for n in ("week06-rnn", "week06-encoder"))
    assert rep.missing == [] and rep.failures() == [] and not rep.failed


@needs_seeds
def test_week06_rnn_numbers_are_covered_inside_their_own_sections():
    """Each token a week06-rnn claim or input covers lies in that claim's section, not in a section it borrowed from."""
    from symseq.read.document import read
    from symseq.read.sections import locate

    derivations = for_source(W6, DERIVATIONS)
    rnn = next(d for d in derivations if d.name == "week06-rnn")
    located = locate(read(SEEDS / W6), derivations)
    ranges = {s.title: (located[id(s)].start, located[id(s)].end) for s in rnn.sections}
    rep = _audit(SEEDS / W6)
    owned = [t for t in rep.tokens if t.attribution.verdict == "covered"
             and (t.attribution.section or ("",))[0] == "week06-rnn"]
    assert len(owned) >= 85
    for t in owned:
        a, b = ranges[t.attribution.section[1]]
        assert a <= t.line <= b, (t.line, t.text, t.attribution)


def _copy(tmp_path, seed, line, old, new, suffix=".txt") -> Path:
    lines = (SEEDS / seed).read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[line - 1].count(old) == 1, lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    path = tmp_path / f"copy_of_{Path(seed).stem}{suffix}"
    path.write_text("".join(lines), encoding="utf-8")
    return path


@needs_seeds
@pytest.mark.parametrize("suffix, fmt", [(".txt", None), (".md", None), (".txt", "markdown")],
                         ids=["text", "md-suffix", "markdown-format"])
def test_one_changed_digit_in_week08_is_reported_exactly(tmp_path, capsys, suffix, fmt):
    """The same edit is found however the handout is read: as text, or as Markdown (where "4. The forward pass
    by hand" is an ordered-list line, yet still the heading of §4, whose claim the edited number is)."""
    path = _copy(tmp_path, W8, 118, "0.792412", "0.792512", suffix)
    rep = _audit(path, ["week08-decoder"], fmt)
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct) == (118, "0.792512", "0.792412")
    assert e.fault == "4th decimal: printed 5, correct 4"
    assert e.source == "week08-decoder::§4 The forward pass by hand::p(B|AB)"
    assert e.value == "0.792411504249"  # 0.79241150424874644…, rounded (not cut) to 12 digits
    assert [t.line for t in rep.tokens if t.attribution.verdict == "wrong"] == [118]
    assert rep.missing == [] and rep.counts.uncovered == 0
    out = tmp_path / "audit.json"
    fmt_args = ["--format", fmt] if fmt else []
    assert main(["--no-color", "audit", str(path), "--derivation", "week08-decoder", "--json", str(out),
                 *fmt_args]) == 1
    text = capsys.readouterr().out
    assert "0.792512" in text and "4th decimal" in text
    record = json.loads(out.read_text())
    assert record["summary"]["wrong"] == 1
    assert record["errata"][0]["line"] == 118
    wrong = [t for t in record["tokens"] if t["class"] == "wrong"]
    assert [(t["line"], t["text"]) for t in wrong] == [(118, "0.792512")]


@needs_seeds
def test_an_exact_vector_claim_edited(tmp_path):
    path = _copy(tmp_path, W8, 78, "gives $(0,4)$", "gives $(0,5)$")
    (e,) = _audit(path, ["week08-decoder"]).errata
    assert (e.line, e.printed, e.correct) == (78, "5", "4")
    assert "entry [1]" in e.fault


@needs_seeds
@pytest.mark.parametrize("line, old, new, correct, fault", [
    (691, "-0.839", "-0.849", "-0.839", "2nd decimal: printed 4, correct 3"),  # Table 13, S_63
    pytest.param(1063, "-0.0954", "-0.0964", "-0.0954", "3rd decimal: printed 6, correct 5",  # Table 23, first sum U
                 marks=pytest.mark.slow),
])
@pytest.mark.parametrize("fmt", ["text", pytest.param("markdown", marks=pytest.mark.slow)])  # Week 06 is long
def test_one_changed_digit_in_a_week06_table(tmp_path, line, old, new, correct, fault, fmt):
    path = _copy(tmp_path, W6, line, old, new)
    rep = _audit(path, ["week06-encoder"], fmt)
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct, e.fault) == (line, new, correct, fault)
    assert rep.missing == []
    assert main(["--no-color", "audit", str(path), "-d", "week06-encoder", "--format", fmt]) == 1


@needs_seeds
@pytest.mark.parametrize("line, old, new, correct, fault", [
    (19, "=1.131.", "=1.132.", "1.131", "3rd decimal: printed 2, correct 1"),  # q_like · k_you
    (23, "becomes [0.8,0.4]", "becomes [0.9,0.4]", "0.8", "entry [0]: 1st decimal: printed 9, correct 8"),
    (17, "≈[0.283,0.283]", "≈[0.283,0.284]", "0.283", "entry [1]: 3rd decimal: printed 4, correct 3"),
    (19, "1×0.283+1×0.283", "1×0.283+1×0.284", "0.283", "3rd decimal: printed 4, correct 3"),  # one term of a sum
    (19, "is [1,1]", "is [1,2]", "1", "entry [1]: the units digit: printed 2, correct 1"),  # the final query
    (17, "v_like=[0,1]", "v_like=[0,2]", "1", "entry [1]: the units digit: printed 2, correct 1"),  # an input
    # an operand of a claimed sum: the 2 is wrong, not the result 1.131 (which a claim of 1.131 and one of 2 took
    # from the run while the sum's claim was missing; it was reported as 1.131, correct 2.262, the sum missing)
    (19, "approximately 1×1.131", "approximately 2×1.131", "1", "the units digit: printed 2, correct 1"),
])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_one_changed_digit_in_week07_without_headings(tmp_path, line, old, new, correct, fault, fmt):
    """Week 7 has no section headings: an edited number is still found in the place of its section."""
    path = _copy(tmp_path, W7, line, old, new)
    rep = _audit(path, ["week07-attention"], fmt)
    (e,) = rep.errata
    assert (e.line, e.correct, e.fault) == (line, correct, fault)
    assert rep.counts.uncovered == 0 and rep.missing == []


@needs_seeds
@pytest.mark.parametrize("line, old, new, correct, fault", [
    (57, "0.8[2,0]+0.1[0,2]", "0.7[2,0]+0.1[0,2]", "0.8", "1st decimal: printed 7, correct 8"),  # a weight of §4.1
    (23, "k_2=[0,-1]", "k_2=[0,-2]", "-1", "entry [1]: the units digit: printed 2, correct 1"),  # a key of §2.1
    (121, "W_Q=[1,0]", "W_Q=[1,1]", "0", "entry [1]: the units digit: printed 1, correct 0"),  # W_Q of §7.4
    (125, r"\tfrac15[0,1]", r"\tfrac16[0,1]", "1/5", "printed 1/6, correct 1/5"),  # a weight of row 2
    (127, "H=1.5U", "H=1.6U", "1.5", "1st decimal: printed 6, correct 5"),
    (135, "answer $[2,1.5]$", "answer $[2,1.6]$", "1.5", "entry [1]: 1st decimal: printed 6, correct 5"),
])
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_one_changed_digit_in_handout11(tmp_path, line, old, new, correct, fault, fmt):
    """Handout #11: an edited input or claimed number is reported wrong on its line, with the correct value
    (read as Markdown too, where its headings "2.1 A complete numerical retrieval" carry no # marks)."""
    path = _copy(tmp_path, H11, line, old, new)
    rep = _audit(path, ["handout11-self-attention"], fmt)
    (e,) = rep.errata
    assert (e.line, e.correct, e.fault) == (line, correct, fault)
    assert rep.counts.uncovered == 0


def _copied_below(tmp_path, seed: str, line: int, old: str, new: str):
    """The seed written to ``tmp_path`` with its line ``line`` printed again just below it, ``old`` (which it must
    end with or hold) replaced by ``new`` in the copy."""
    lines = (SEEDS / seed).read_text(encoding="utf-8").split("\n")
    assert old in lines[line - 1], (line, old)
    head, _, tail = lines[line - 1].rpartition(old)
    path = tmp_path / seed
    path.write_text("\n".join(lines[:line] + [head + new + tail] + lines[line:]), encoding="utf-8")
    return path


@needs_seeds
def test_a_line_repeated_with_a_false_value_fails_where_it_stands(tmp_path):
    """Handout #11 with its head-1 weighted sum (line 57) repeated below it with 0.8 → 0.9: the copy's own arithmetic
    is false (0.9·2 + 0.1·4 = 2.2, printed 2), and the audit with the derivation fails at the copy's line. The
    weights 0.1 are the derivation's exact inputs, and the 2 printed after = is exact, so no rounding excuses it."""
    lines = (SEEDS / H11).read_text(encoding="utf-8").split("\n")
    assert "0.8[2,0]+0.1[0,2]+0.1[4,4]=[2,0.6]" in lines[56]
    lines.insert(57, "Again, for head 1: $0.9[2,0]+0.1[0,2]+0.1[4,4]=[2,0.6]$.")
    path = tmp_path / H11
    path.write_text("\n".join(lines), encoding="utf-8")
    rep = _audit(path, ["handout11-self-attention"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(58, "2", "2.2")]
    assert rep.failures()


@needs_seeds
def test_a_claimed_number_printed_again_with_another_value_is_wrong_at_the_copy(tmp_path):
    """Week 8's loss sentence (line 120, "about 0.232674 nats", a claim) printed again below it with 0.232675: the
    copy says the same words of the same quantity with a second value, an erratum at the copy whose correct value
    is the claimed one; the line printed again unchanged is no erratum."""
    rep = _audit(_copied_below(tmp_path, W8, 120, "0.232674", "0.232675"), ["week08-decoder"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(121, "0.232675", "0.232674")]
    assert _audit(_copied_below(tmp_path, W8, 120, "0.232674", "0.232674"), ["week08-decoder"]).errata == []


@needs_seeds
def test_a_line_repeated_whose_own_arithmetic_still_holds_is_wrong_at_the_copy(tmp_path):
    """Week 7's score 1×0.283+1×0.283=0.566 (line 19) printed again below it with 0.284: the copy's sum still holds
    to the printed digits (0.283 + 0.284 rounds to 0.566 within their rounding), but it gives the claimed entry of
    k_like a second value, an erratum at the copy whose correct value is the claimed 0.283."""
    rep = _audit(_copied_below(tmp_path, W7, 19, "1×0.283+1×0.283=", "1×0.283+1×0.284="), ["week07-attention"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(20, "0.284", "0.283")]


@needs_seeds
def test_an_operand_a_claim_took_is_still_wrong_where_the_statement_fails(tmp_path):
    """Week 7's dot product 1×0+1×0.141=0.141 (line 21) printed again below it with 2×0.141: the copy's arithmetic
    is false however 0.141 is rounded (2 × 0.141 = 0.282), and holds with 1 for the 2. The section's claim of
    d_k = 2 takes that 2 as its printed number, yet the statement fails where it stands, correct 1."""
    rep = _audit(_copied_below(tmp_path, W7, 21, "1×0+1×0.141=", "1×0+2×0.141="), ["week07-attention"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(22, "2", "1")]
    assert rep.disagreements == [] and rep.failures()


@needs_seeds
def test_a_table_row_printed_twice_with_one_value_changed_is_wrong_at_the_copy(tmp_path):
    """Week 06's row "5: miles 0.197 0.154" (line 841) printed again just below it with 0.155: the copy is an
    erratum, correct 0.154; rows with other labels are never compared."""
    row = (SEEDS / W6).read_text(encoding="utf-8").split("\n")[840]
    assert row.startswith("5: miles") and row.endswith("0.154")
    rep = _audit(_copied_below(tmp_path, W6, 841, "0.154", "0.155"), ["week06-rnn", "week06-encoder"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(842, "0.155", "0.154")]


@needs_seeds
def test_a_changed_input_of_week06_is_reported(tmp_path):
    # Table 8, row 1 (journey), j = 0: the embedding the derivation computes with is 0.5
    path = _copy(tmp_path, W6, 507, "journey\t0.5\t", "journey\t0.6\t")
    rep = _audit(path, ["week06-encoder"])
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct, e.kind) == (507, "0.6", "0.5", "input")
    assert e.fault.startswith("row 1, column 0")


@needs_seeds
@pytest.mark.parametrize("seed, line, old, new, names, claim", [
    (W8, 124, "the attention weights are unchanged", "the attention weights change", ["week08-decoder"],
     ("week08-decoder::§4 The forward pass by hand, intervention",
      "with the keys kept and the first value zeroed the attention weights stay as they were")),
    (H11, 43, "columns generally do not", "columns generally do too", ["handout11-self-attention"],
     ("handout11-self-attention::§3.2 The full matrix operation, columns are keys",
      "columns generally do not sum to one")),
    (W7, 33, "does not change Softmax", "changes Softmax", ["week07-attention"],
     ("week07-attention::Softmax sensitivity, shifts and scaling",
      "adding the same constant to every score of a row does not change softmax")),
    (W6, 1187, "the same parameters do not produce", "the same parameters produce", ["week06-encoder"],
     ("week06-encoder::Pre-norm, post-norm, and the backward path, normalization placement",
      "the same parameters give different intermediate numbers under post-norm")),
    (W6, 360, "it cannot reconstruct information", "it can reconstruct information", ["week06-rnn"],
     ("week06-rnn::Clipping limits a large gradient; it cannot recover a lost one, vanished gradient",
      "clipping cannot restore a vanished gradient: a tiny gradient comes out exactly as tiny")),
], ids=["week08-intervention", "handout11-columns", "week07-shift", "week06-post-norm", "week06-clipping"])
def test_a_statement_in_words_reworded_in_a_seed_is_missing(tmp_path, seed, line, old, new, names, claim):
    """A comparison or invariance a seed states in words is claimed with near= its words and decided by the
    numbers; reworded to say the opposite, the audit fails with that claim missing and nothing else."""
    rep = _audit(_copy(tmp_path, seed, line, old, new), names)
    assert [(m.id, m.printed) for m in rep.missing] == [claim]
    assert rep.errata == [] and rep.failed


@needs_seeds
def test_the_unchanged_seed_exits_zero_and_names_its_derivation(capsys):
    assert main(["--no-color", "audit", str(SEEDS / W8)]) == 0
    out = capsys.readouterr().out
    assert "coverage 100.0%" in out and "week08-decoder" in out


def test_a_file_without_derivation_or_missing_is_a_clear_error(tmp_path, capsys):
    f = tmp_path / "notes.txt"
    f.write_text("Nothing here but 0.5.\n", encoding="utf-8")
    assert main(["audit", str(f)]) == 1  # no derivation: the page's own arithmetic, and it prints none
    assert "no arithmetic statement was found" in capsys.readouterr().out
    assert main(["audit", str(tmp_path / "absent.txt"), "-d", "week08-decoder"]) == 2
    assert "no handout at" in capsys.readouterr().err
    with pytest.raises(AuditError):
        audit_file(f, [])


def test_section_titles_name_headings():
    assert normalise("§1 One head") == normalise("1. One head") == "one head"
    assert score("Match each forward operation to its backward calculation (Table 3)",
                 "Match each forward operation to its backward calculation") == 1.0
    assert score("Inside a complete Transformer encoder: read the block as two updates",
                 "Read the block as two updates to the representation") >= 0.85
    assert score("§2 Residual updates and normalization", "Reveal the explanation") == 0


def test_digit_at_fault():
    assert digit_fault("0.792512", "0.792412") == "4th decimal: printed 5, correct 4"
    assert digit_fault("−0.849", "-0.839") == "2nd decimal: printed 4, correct 3"
    assert digit_fault("12.5", "13.5") == "the units digit: printed 2, correct 3"
    assert digit_fault("0.5", "-0.5").startswith("the sign")
    assert digit_fault("35%", "30%") == "the units digit: printed 5, correct 0"
    assert digit_fault("49,052", "49,152") == "the hundreds digit: printed 0, correct 1"
    assert digit_fault("8 × 10^{-2}", "8 × 10^{-3}") == "the exponent: printed 8 × 10^{-2}, correct 8 × 10^{-3}"
    assert digit_fault("2\\times e 5", "3\\times e 5")  # text that is no number, with an e in it: no error


def test_markdown_and_latex_sources_are_read():
    md = parse("# 4 The forward pass\n\n```python\nx = 0.5\n```\n\n| a | b |\n|---|---|\n| 0 | 0.25 |\n",
               path="n.md")
    assert md.format == "markdown" and md.headings[0].text == "4 The forward pass"
    assert md.code == {3, 4, 5} and md.tables[0].rows == [9]
    tex = parse("\\section{The forward pass}\n$w \\simeq 0.330238$ % 0.999 is a comment\n", path="n.tex")
    assert [t.key for t in tex.tokens] == ["0.330238"]
    assert tex.headings[0].text == "The forward pass"


@needs_seeds
@pytest.mark.parametrize("seed", [_param(s, slow=(W6,)) for s in EXPECTED])  # Week 06, the longest, with -m slow
def test_a_seed_reads_the_same_as_markdown(seed):
    """A plain-text seed saved as Markdown has the same headings, the same located sections and the same
    class for every number (the seeds use no Markdown markup that would change them)."""
    from symseq.read.document import read

    text, md = read(SEEDS / seed), read(SEEDS / seed, fmt="markdown")
    assert [(h.line, h.text) for h in md.headings] == [(h.line, h.text) for h in text.headings]
    a, b = _audit(SEEDS / seed), _audit(SEEDS / seed, fmt="markdown")
    assert b.counts.as_dict() == a.counts.as_dict() and b.unlocated == a.unlocated
    assert [(t.line, t.text, t.attribution.verdict) for t in b.tokens] == [(t.line, t.text, t.attribution.verdict) for t in a.tokens]


def test_markdown_headings_marked_and_plain():
    """ATX (closing #s dropped), setext and lone bold lines are marked headings; a numbered title standing
    alone ("4. The forward pass by hand") is a plain one; list items, quotes and table rows are none."""
    md = parse("## 1. One head ##\n\nResidual updates\n----------------\n\n**Key claims and status**\n\n"
               "4. The forward pass by hand\n\n1. Write down a complete decoder.\n\n- a bullet\n\n> a quote\n\n"
               "| a | b |\n", path="n.md")
    assert [(h.line, h.text, h.marked) for h in md.headings] == [
        (1, "1. One head", True), (3, "Residual updates", True), (6, "Key claims and status", True),
        (8, "4. The forward pass by hand", False)]
    text = parse("4. The forward pass by hand\n\nThe pass.\n", path="n.txt")
    assert [(h.text, h.marked) for h in text.headings] == [("4. The forward pass by hand", False)]


def test_a_marked_heading_places_a_section_before_a_plain_line_naming_it():
    from symseq import Derivation
    from symseq.read.sections import locate

    d = Derivation("placing", title="placing", source="n.md")
    d.section("§4 The forward pass by hand")(lambda s: None)
    md = parse("The forward pass by hand\n\nA list of contents.\n\n# 4 The forward pass by hand\n\nw = 0.5\n",
               path="n.md")
    (loc,) = locate(md, [d]).values()
    assert (loc.heading, loc.end) == (5, 7)
    plain = parse("4. The forward pass by hand\n\nw = 0.5\n", path="n.md")
    (loc,) = locate(plain, [d]).values()
    assert (loc.heading, loc.end) == (1, 3)


@needs_seeds
@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_an_edited_number_is_found_when_no_section_heading_is(tmp_path, fmt):
    """Week 8 with every heading line blanked out: 0.792412 is printed three times (§4, checkpoint 2, the key
    claims), so §4's claim is placed by the numbers printed once around it (0.584075 of checkpoint 2 after
    it), and its edited occurrence on line 118 is still the one reported."""
    from symseq.read.document import read

    heads = {h.line for h in read(SEEDS / W8).headings}
    lines = (SEEDS / W8).read_text(encoding="utf-8").splitlines()
    lines = ["Part" if i in heads else ln for i, ln in enumerate(lines, start=1)]
    assert lines[117].count("0.792412") == 1
    lines[117] = lines[117].replace("0.792412", "0.792512")
    path = tmp_path / "week08_without_headings.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rep = _audit(path, ["week08-decoder"], fmt)
    assert len(rep.unlocated) == 9
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct) == (118, "0.792512", "0.792412")
    # with no heading left, lone integers and short vectors are attributed only between the numbers of their
    # neighbouring claims, never across sections: those it cannot place are missing, each with the lines where
    # it was expected (the audit fails loudly, never silently)
    assert rep.failed
    assert len(rep.missing) <= 6 and all(m.lines for m in rep.missing)


@needs_seeds
def test_fail_under_and_json_on_stdout(capsys):
    seed = str(SEEDS / W6)
    assert main(["--no-color", "audit", seed, "-d", "week06-encoder", "--fail-under", "99"]) == 1
    assert "below --fail-under 99" in capsys.readouterr().out
    assert main(["--no-color", "audit", str(SEEDS / W8), "--json", "-"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["summary"]["coverage_percent"] == 100.0 and "coverage" in captured.err
    classes = {t["class"] for t in record["tokens"]}
    assert classes == {"covered", "structural"}
    assert record["by_derivation"]["week08-decoder"]["lines"] == [[24, 194]]


def test_sections_without_headings_are_placed_between_their_neighbours():
    """A handout without section headings: a lone integer or a scalar input of a section is found between the
    numbers found for the sections before and after it, not at the first equal digit of the file."""
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    text = ("The count is 2, the depth is 3, and the first row is [0.5,0.5].\n\n"
            "Here d_k=2 and n=3 for this part of the text.\n\n"
            "Each product has variance 1 and the weights are [0.8,0.4].\n\n"
            "A later 2, 3 and 1 belong to no section.\n")
    d = Derivation("no-headings", title="a chapter without headings", source="chapter.txt")

    @d.section("The first row")
    def first(s):
        s.claim("[0.5,0.5]", sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 2)]]))

    @d.section("The width and the count")
    def width(s):
        s.claim("2", sp.Integer(2), what="d_k")
        s.given(sp.Integer(3), what="n")

    @d.section("The variance and the weights")
    def weights(s):
        # two claims of the one printed 1: they name its place, so they share it
        s.claim("1", sp.Integer(1), what="variance of one product", at="variance")
        s.claim("1", sp.Integer(1), what="the same variance, restated", at="variance")
        s.claim("[0.8,0.4]", sp.Matrix([[sp.Rational(4, 5), sp.Rational(2, 5)]]))

    rep = audit(parse(text, path="chapter.txt"), [d])
    covered = sorted((t.line, t.text) for t in rep.tokens if t.attribution.verdict == "covered")
    assert covered == [(1, "[0.5,0.5]"), (3, "2"), (3, "3"), (5, "1"), (5, "[0.8,0.4]")]
    assert sorted((t.line, t.text) for t in rep.tokens if t.attribution.verdict == "uncovered") == [
        (1, "2"), (1, "3"), (7, "1"), (7, "2"), (7, "3")]
    assert rep.missing == []
    edited = audit(parse(text.replace("[0.8,0.4]", "[0.8,0.5]"), path="chapter.txt"), [d])
    (e,) = edited.errata  # found in the place of its section, and checked at its printed digits
    assert (e.line, e.printed, e.correct) == (5, "0.5", "0.4")


def _two_heads_derivation():
    import sympy as sp

    from symseq import Derivation

    d = Derivation("inputs-and-sums", title="inputs and written-out sums", source="sums.txt")

    @d.section("1 Two heads")
    def heads(s):
        s.given(sp.Integer(8), what="D")
        for h, w in enumerate((sp.Rational(4, 5), sp.Rational(1, 10))):
            s.given(w, what=f"weight {h}")
        s.given(sp.Matrix([[0, -1]]), what="k_2")
        s.claim("1×1.131+1×0", sp.Rational(1131, 1000), what="q · k written out")
        s.claim("1.131", sp.Rational(1131, 1000), what="q · k")
    return d


SUMS = ("1 Two heads\n\n"
        "At $D=8$ the weights are 0.8 and 0.1, the key $k_2=[0,-1]$, and q · k is 1×1.131+1×0=1.131 here.\n")


@pytest.mark.parametrize("old, new, token, printed, correct, fault", [
    ("0.8 and", "0.7 and", "0.7", "0.7", "0.8", "1st decimal: printed 7, correct 8"),  # a scalar input
    ("[0,-1]", "[0,-2]", "[0,-2]", "-2", "-1", "entry [1]: the units digit: printed 2, correct 1"),  # 1 of 2 entries
    ("1×1.131+", "1×1.141+", "1.141", "1.141", "1.131", "2nd decimal: printed 4, correct 3"),  # 1 number of several
])
def test_an_edited_input_or_number_among_several_is_reported_wrong(old, new, token, printed, correct, fault):
    from symseq.audit import audit

    d = _two_heads_derivation()
    assert audit(parse(SUMS, path="sums.txt"), [d]).counts.covered == 9
    rep = audit(parse(SUMS.replace(old, new), path="sums.txt"), [d])
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct, e.fault) == (3, printed, correct, fault)
    assert [t.text for t in rep.tokens if t.attribution.verdict == "wrong"] == [token]  # that number alone
    assert rep.counts.uncovered == 0 and rep.missing == []


def test_a_lone_one_digit_input_edited_in_its_place_is_wrong_there():
    from symseq.audit import audit

    # 9 is as close to 8 as any digit, but it stands where the section's order puts D: it is D, printed wrong
    rep = audit(parse(SUMS.replace("$D=8$", "$D=9$"), path="sums.txt"), [_two_heads_derivation()])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "9", "8")]
    assert rep.missing == [] and rep.uncovered() == []


def test_numbers_of_a_section_that_was_not_checked_say_why(tmp_path):
    import sympy as sp

    from symseq import Derivation

    d = Derivation("needs-a-package", title="Two sections", source="two.txt")

    @d.section("1. A half")
    def half(s):
        s.claim("0.5", sp.Rational(1, 2), what="one half")

    @d.section("2. A quarter", requires=("symseq_no_such_package",))
    def quarter(s):  # pragma: no cover - never built: its package is missing
        s.claim("0.25", sp.Rational(1, 4), what="one quarter")

    path = tmp_path / "two.txt"
    path.write_text("Two sections\n\n1. A half\n\nThe half is 0.5 here.\n\n2. A quarter\n\nThe quarter is 0.25 here.\n")
    rep = audit_file(path, [d])
    (t,) = rep.uncovered()
    assert (t.line, t.text) == (9, "0.25")
    assert t.attribution == Attribution("uncovered", Unchecked(
        "needs-a-package", "2. A quarter", "needs symseq_no_such_package, which is not installed (pip install "
        "'symseq_no_such_package')"))
    assert t.attribution.text() == ("needs-a-package · 2. A quarter was not checked: needs symseq_no_such_package, "
                                    "which is not installed (pip install 'symseq_no_such_package')")


@needs_seeds
@pytest.mark.parametrize("line, old, new, printed, correct", [
    (600, r"\(d_k=3\)", r"\(d_k=4\)", "4", "3"),  # one head's width, stated before its section's heading
    (811, r"\(T=7\)", r"\(T=8\)", "8", "7"),  # "We retain T=7" before the two-heads section
    (817, r"{\sqrt{3}}", r"{\sqrt{4}}", "√4", "√3"),  # not taken for T = 7 edited
])
def test_an_input_stated_where_its_section_is_introduced_is_wrong_at_its_line(tmp_path, line, old, new, printed,
                                                                               correct):
    """Week 06 states a section's sizes in the text that introduces it (after an unnamed chapter heading): an edit
    there is wrong at its line, not missing, and another section's copy is not taken in its place."""
    path = _copy(tmp_path, W6, line, old, new, ".txt")
    rep = _audit(path, ["week06-rnn", "week06-encoder"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(line, printed, correct)]
    assert not rep.missing


@needs_seeds
def test_a_width_deleted_before_its_section_is_missing_there_and_the_next_sections_copy_stays_its_own(tmp_path):
    path = _copy(tmp_path, W6, 600, r"\(d_k=3\)", r"\(d_k=\)", ".txt")
    rep = _audit(path, ["week06-rnn", "week06-encoder"])
    assert not rep.errata
    (m,) = rep.missing
    assert m.id.endswith("one head::d_k") and m.lines[0] <= 600 <= m.lines[1]


@needs_seeds
def test_the_s60_edit_on_line_681_is_wrong_at_its_line(tmp_path, capsys):
    """Week 06, line 681 (S_60 ≈ 0.672/√3 ≈ 0.388) edited to 0.389: wrong at line 681, correct rounding 0.388,
    exit 1 (it once passed with the Table 13 claim listed as missing)."""
    path = _copy(tmp_path, W6, 681, "0.388", "0.389", ".txt")
    rep = _audit(path, ["week06-rnn", "week06-encoder"])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(681, "0.389", "0.388")]
    assert rep.failed
    assert main(["--no-color", "audit", str(path), "-d", "week06-rnn", "-d", "week06-encoder"]) == 1


@needs_seeds
def test_a_deleted_number_fails_and_says_where_it_was_expected(tmp_path):
    """Deleting a printed result leaves its claim missing: the audit fails and names the lines around it."""
    path = _copy(tmp_path, W8, 118, "0.792412", "", ".txt")
    rep = _audit(path, ["week08-decoder"])
    assert rep.failed and rep.errata == []
    (m,) = [m for m in rep.missing if m.printed == "0.792412"]
    assert m.lines[0] <= 118 <= m.lines[1]


def test_a_wrong_claim_not_located_in_the_text_still_fails(tmp_path):
    """A claim whose number the text does not hold, and which does not hold either, is an erratum without a line."""
    import sympy as sp

    from symseq import Derivation

    d = Derivation("unlocated", title="t", source="u.txt")

    @d.section("One number")
    def one(s):
        s.claim("0.5", sp.Rational(1, 3), what="a third, printed wrongly elsewhere")
        s.claim("0.34", sp.Rational(1, 3), what="a third, left to the reader", in_text=False)

    path = tmp_path / "u.txt"
    path.write_text("One number\n\nNothing here prints it.\n", encoding="utf-8")
    rep = audit_file(path, [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(None, "0.5", "0.3"), (None, "0.34", "0.33")]
    assert "not located in the text" in rep.errata[0].fault
    assert rep.failures() == ["2 wrong number(s)", "1 claim(s) missing from the text"]


@pytest.mark.parametrize("pct", ["-1", "101", "abc"])
def test_fail_under_takes_a_percentage(pct, capsys):
    with pytest.raises(SystemExit):
        main(["audit", "x.txt", "--fail-under", pct])
    assert "expected a percentage from 0 to 100" in capsys.readouterr().err


def test_a_line_stating_a_quantity_is_never_a_heading():
    """Short lines between blank lines are headings unless they hold "=" or a bracketed number; a section title
    is found as a whole line even without blank lines around it."""
    text = "Intro\n\nd_k = 4\n\nShape: [3, 4]\n\n**Step 2: z = [0.599, 0.587]**\n\nThe end of it\n"
    doc = parse(text, fmt="markdown")
    assert [h.text for h in doc.headings] == ["Intro", "The end of it"]


def test_a_section_title_is_found_without_blank_lines_around_it():
    from symseq import Derivation
    from symseq.read.sections import locate

    d = Derivation("tight", title="t", source="t.txt")

    @d.section("Scores")
    def scores(s):
        s.claim("2", 2, what="two")

    doc = parse("Some words first.\nScores\nThere are 2 of them.\n")
    (loc,) = locate(doc, [d]).values()
    assert (loc.heading, loc.start, loc.end) == (2, 2, 3)


def _rows_derivation():
    import sympy as sp

    from symseq import Derivation

    d = Derivation("rows", title="matrices printed row by row", source="rows.md")

    @d.section("1 Weights")
    def weights(s):
        s.given(sp.Matrix([[1, 2], [3, 4]]), what="W as printed")
        s.claim("[0.5000,1.0000;1.5000,2.0000]", sp.Matrix([[1, 2], [3, 4]]) / 2, what="W / 2")
    return d


ROWS = ("# 1 Weights\n\n"
        "The weights are W = [[1, 2],\n"
        "                     [3, 4]] and half of them print as\n"
        "\n"
        "tensor([[0.5000, 1.0000],\n"
        "        [1.5000, 2.0000]])\n")


def test_a_matrix_printed_row_by_row_is_one_claim_and_one_input():
    from symseq.audit import audit

    rep = audit(parse(ROWS, path="rows.md"), [_rows_derivation()])
    assert not rep.failed and rep.missing == [] and rep.errata == []
    covered = [(t.line, t.text) for t in rep.tokens if t.attribution.verdict == "covered"]
    assert covered == [(3, "[1, 2]"), (4, "[3, 4]"), (6, "[0.5000, 1.0000]"), (7, "[1.5000, 2.0000]")]


@pytest.mark.parametrize("old, new, line, printed, correct", [
    ("[1.5000, 2.0000]", "[1.5000, 2.1000]", 7, "2.1000", "2"),  # the claim's second row
    ("[3, 4]", "[3, 5]", 4, "5", "4"),  # the input's second row
])
def test_an_edited_row_is_wrong_at_its_own_line(old, new, line, printed, correct):
    from symseq.audit import audit

    rep = audit(parse(ROWS.replace(old, new), path="rows.md"), [_rows_derivation()])
    assert rep.failed
    assert [(e.line, e.printed) for e in rep.errata] == [(line, printed)]
    assert rep.errata[0].correct.rstrip("0").rstrip(".") == correct


def test_a_result_printed_with_the_wrong_shape_is_an_erratum():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("shapes", title="a gradient printed as a vector", source="grad.md")

    @d.section("1 Gradient")
    def grad(s):
        s.claim("[0.1, 0.2]", sp.Matrix([[1, 2], [3, 4]]) / 10, what="dL/dW")  # the page prints 2 of 4 entries

    rep = audit(parse("# 1 Gradient\n\nThe gradient is dL/dW = [0.1, 0.2].\n", path="grad.md"), [d])
    (e,) = rep.errata
    assert e.line == 3 and e.printed == "[0.1, 0.2]" and e.fault.startswith("wrong shape")
    assert "2×2" in e.fault and rep.failed
    r = d.sections[0].claims[0].check(30)
    assert r.status == "mismatch" and r.message.startswith("wrong shape")


def test_a_number_in_a_heading_is_claimed_by_anchoring_the_claim_to_it():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("heading", title="a size printed in a heading", source="h.md")

    @d.section("Initial vectors")
    def vectors(s):
        s.given(sp.Matrix([[1, 0, 2]]), what="x")
        s.claim("3", sp.Integer(3), what="the width of x", near="# Initial vectors")  # not the number itself

    text = "# Initial vectors (in 3 dimensions)\n\nThe input is x = [1, 0, 2].\n"
    rep = audit(parse(text, path="h.md"), [d])
    assert not rep.failed, rep.failures()
    assert [(t.line, t.text, t.attribution.verdict) for t in rep.tokens if t.text == "3"] == [(1, "3", "covered")]
    rep = audit(parse(text.replace("in 3 dim", "in 4 dim"), path="h.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(1, "4", "3")]


def test_an_edited_fraction_printed_again_elsewhere_is_wrong_at_its_line():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("halves", title="a half printed twice", source="halves.md")

    @d.section("1 Loss")
    def loss(s):
        s.claim(r"\tfrac12", sp.Rational(1, 2), what="the factor of the loss", at="loss")
        s.claim(r"\tfrac12", sp.Rational(1, 2), what="the factor that cancels the 2", at="derivative")

    text = "# 1 Loss\n\nThe loss is $\\tfrac12 e^2$.\n\nIts factor $\\tfrac12$ cancels the 2 of the square.\n"
    assert not audit(parse(text, path="halves.md"), [d]).failed
    rep = audit(parse(text.replace("is $\\tfrac12", "is $\\tfrac13"), path="halves.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "1/3", "1/2")]


def _trajectory_derivation():
    import sympy as sp

    from symseq import Derivation

    d = Derivation("trajectory", title="a short formula and a shared formula", source="traj.md")

    @d.section("1 Trajectories")
    def traj(s):
        s.given(sp.Rational(6, 5), what="w_h, the recurrent weight")
        s.given(sp.Integer(1), what="the input weight")  # no symbol named: looked for in its section only
        s.prove("T=1", lambda: (True, "one state"), what="one step has no transition")
        s.prove("the sensitivity is one at one step", lambda: (True, ""))  # a sentence: not looked for
        for k in range(3):  # one formula printed once for t = 0, 1, 2: at t = 0 it holds whatever the base
            s.claim(r"\sin\frac{t}{100}", sp.sin(sp.Rational(k, 100)), names={"t": sp.Integer(k)},
                    what=f"p_{k}", at="positions")

    @d.section("2 Code")
    def code(s):
        s.given(sp.Integer(1), what="B in the code")
    return d


TRAJ = ("# 1 Trajectories\n\n"
        "With $w_h=1.2$, $w_x=1$ and input $x_t=1$: at $T=1$ the sensitivity is one.\n\n"
        "Every position gets $\\sin\\frac{t}{100}$.\n\n"
        "# 2 Code\n\n"
        "The batch holds 1 sequence of 1 step.\n")


def test_a_short_formula_property_is_found_where_it_reads_and_missed_when_edited():
    from symseq.audit import audit

    d = _trajectory_derivation()
    rep = audit(parse(TRAJ, path="traj.md"), [d])
    assert not rep.failed, rep.failures()
    # T=1 takes the 1 after T=, not the 1 of x_t=1 (which no claim prints)
    line3 = [(t.text, t.attribution.verdict, t.attribution.what) for t in rep.tokens if t.line == 3]
    assert line3 == [("1.2", "covered", "w_h, the recurrent weight"), ("1", "covered", "the input weight"),
                     ("1", "uncovered", ""), ("1", "covered", "one step has no transition")]
    for edit in ("$T=2$", "$T=$"):
        bad = audit(parse(TRAJ.replace("$T=1$", edit), path="traj.md"), [d])
        assert bad.failed, edit  # a formula the derivation states as printed is no longer there


def test_claims_sharing_one_edited_formula_are_checked_as_the_text_reads():
    from symseq.audit import audit

    d = _trajectory_derivation()
    rep = audit(parse(TRAJ.replace("{100}", "{101}"), path="traj.md"), [d])
    # p_0 holds at 1/101 too (sin 0), but p_1 and p_2 do not: the one edited number is wrong, reported once
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(5, "101", "100")]
    assert len(rep.errata[0].also) == 1


def test_an_input_is_not_taken_from_another_section_when_its_own_number_is_edited():
    from symseq.audit import audit

    d = _trajectory_derivation()
    for edit in ("$w_x=2$ and input $x_t$", "$w_x=$ and input $x_t$"):
        rep = audit(parse(TRAJ.replace("$w_x=1$ and input $x_t=1$", edit), path="traj.md"), [d])
        assert rep.failed
        # the second 1 of the code section is no claim's and no input's: w_x does not take it from there
        assert [(t.attribution.verdict, t.attribution.what) for t in rep.tokens if t.line == 9] == [
            ("covered", "B in the code"), ("uncovered", "")]


def test_an_edited_shape_or_root_is_wrong_and_corrected_as_the_derivation_prints_it():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("shapes", title="a shape and a root", source="shapes.md")

    @d.section("1 Scores")
    def scores(s):
        s.claim_shape("1×H", (1, 3), dims={"H": 3}, what="one row of scores")
        s.claim("√3", sp.sqrt(3), what="the scale √d_k")

    text = "# 1 Scores\n\nThe product yields $1\\times H$, divided by $\\sqrt3$.\n"
    assert not audit(parse(text, path="shapes.md"), [d]).failed
    rep = audit(parse(text.replace("$1\\times H$", "$2\\times H$"), path="shapes.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "2", "1")]
    rep = audit(parse(text.replace("\\sqrt3", "\\sqrt4"), path="shapes.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "√4", "√3")]


def test_an_edited_number_of_a_restated_formula_is_not_covered_by_the_next_formula():
    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("maps", title="two restated formulas on one line", source="maps.md")

    @d.section("1 Maps")
    def maps(s):
        s.prove("k_t = ((h_{t,0}+h_{t,3})/2, (h_{t,2}+h_{t,4})/2)", lambda: (True, ""), what="the key map")
        s.prove("v_t = ((h_{t,3}+h_{t,4})/2)", lambda: (True, ""), what="the value map")

    text = "# 1 Maps\n\n$k_t=((h_{t,0}+h_{t,3})/2,(h_{t,2}+h_{t,4})/2)$ and $v_t=((h_{t,3}+h_{t,4})/2)$.\n"
    assert not audit(parse(text, path="maps.md"), [d]).failed
    for k in (0, 1, 2):  # each /2 edited to /3: the formula that prints it is wrong there
        at = [i for i in range(len(text)) if text.startswith(")/2", i)][k] + 2
        rep = audit(parse(text[:at] + "3" + text[at + 1:], path="maps.md"), [d])
        assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "3", "2")], k


def test_a_number_word_stands_only_for_a_bare_numeral_and_a_near_word_is_taken():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("words", title="a weight spelled out, a fraction and a matrix", source="words.md")

    @d.section("1 Weights")
    def weights(s):
        s.claim(r"\frac{1}{d}", sp.Rational(1, 3), names={"d": sp.Integer(3)}, what="weight in μ", at="mean")
        s.claim(r"\frac{1}{d}", sp.Rational(1, 3), names={"d": sp.Integer(3)}, what="weight in v", at="variance")
        s.claim("1", sp.Integer(1), what="the first weight", near="its weight is one")
        w = sp.Rational(1, 3)
        s.claim(r"\begin{array}{cc}1& 0\\ w& 1-w\end{array}", sp.Matrix([[1, 0], [w, 1 - w]]),
                names={"w": w}, what="A")
        s.claim(r"\begin{array}{cc}2& 0\\ w& 2-w\end{array}", sp.Matrix([[2, 0], [w, 2 - w]]),
                names={"w": w}, what="H'")

    text = ("# 1 Weights\n\n"
            "Each of the $d$ coordinates of one row counts: $\\mu=\\frac{1}{d}\\sum h$, $v=\\frac{1}{d}\\sum e^2$.\n\n"
            "Position 1 sees itself alone, so its weight is one.\n\n"
            "$$A=\\begin{array}{cc}1& 0\\\\ w& 1-w\\end{array},H'=\\begin{array}{cc}2& 0\\\\ w& 2-w\\end{array}$$\n")
    rep = audit(parse(text, path="words.md"), [d])
    assert not rep.failed, rep.failures()
    # the label of "Position 1" is no claim's: the weight is the word
    assert [(t.text, t.attribution.verdict) for t in rep.tokens if t.line == 5] == [("1", "structural")]
    # a deleted 1 of a fraction is missing, not the word "one" or the label "Position 1" further on
    bad = audit(parse(text.replace("\\mu=\\frac{1}{d}", "\\mu=\\frac{}{d}"), path="words.md"), [d])
    assert bad.failed and len(bad.missing) == 1 and bad.missing[0].lines[0] <= 3 <= bad.missing[0].lines[1]
    assert [(t.text, t.attribution.verdict) for t in bad.tokens if t.line == 5] == [("1", "structural")]
    # a deleted entry of A, whose two others run into H' (1, 0 | 2 read as one edit): A is missing at its line
    bad = audit(parse(text.replace("w& 1-w", "w& -w"), path="words.md"), [d])
    assert bad.failed and [m.lines for m in bad.missing] == [(7, 7)] and not bad.errata


def test_a_section_that_does_not_build_fails_the_audit():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("broken", title="a section with a bug", source="b.md")

    @d.section("1 Sizes")
    def sizes(s):
        s.claim("2", sp.Integer(2), what="the width")

    @d.section("2 Scores")
    def scores(s):
        raise RuntimeError("a bug in the derivation")

    rep = audit(parse("# 1 Sizes\n\nThe width is 2.\n\n# 2 Scores\n\nThe score is 3.\n", path="b.md"), [d])
    # its claims were never stated, so the 3 it should have checked is not an all-clear
    assert rep.failed and rep.failures()[0].startswith("1 section(s) of the derivation did not build: broken · 2 Scores")
    (three,) = [t for t in rep.tokens if t.text == "3"]
    error = d.sections[1].error.splitlines()[0]  # headed by the author's file and line
    assert error.endswith(f"test_audit.py:{scores.__code__.co_firstlineno + 2}: RuntimeError: a bug in the derivation")
    assert three.attribution == Attribution("uncovered", Unchecked("broken", "2 Scores", error))
    assert rep.as_json()["broken_sections"] == [{"derivation": "broken", "section": "2 Scores", "error": error}]


def test_a_claim_that_cannot_be_checked_fails_the_audit():
    """A claim whose check raises (a value of a type no claim reads, here a ledger item, not its handle) decides
    nothing: the number the text prints for it was not checked, so the audit may not pass on it (it passed, with
    the token uncovered, while ``symseq verify`` reported the error)."""
    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("undecided", title="a claim of an item", source="u.md")

    @d.section("1 Loss")
    def loss(s):
        L = s.ledger("a loss")
        x = L.input("x", 3)
        L.define("L", x * x / 2)
        s.claim("4.5", L["L"], what="L, claimed by its ledger item")  # L["L"] is the item; its handle is x*x/2's

    rep = audit(parse("# 1 Loss\n\nThe loss is 4.5.\n", path="u.md"), [d])
    assert rep.failed and rep.undecided and rep.undecided[0][0] == "undecided::1 Loss::L, claimed by its ledger item"
    assert any(f.startswith("1 claim(s) could not be checked: undecided::1 Loss") for f in rep.failures())
    (num,) = [t for t in rep.tokens if t.text == "4.5"]
    assert num.attribution.verdict == "uncovered" and num.attribution.detail.startswith("error")
    assert rep.as_json()["undecided_claims"][0]["claim"] == "undecided::1 Loss::L, claimed by its ledger item"


def test_a_deleted_number_printed_again_elsewhere_in_its_section_is_missing_at_its_place():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("halves2", title="a half printed in three places", source="h2.md")

    @d.section("1 Mix")
    def mix(s):
        s.claim("0.5", sp.Rational(1, 2), what="the first weight")
        s.claim("0.3", sp.Rational(3, 10), what="the first value")
        s.claim("0.5", sp.Rational(1, 2), what="the second weight")
        s.prove(r"r_0-0.25r_1+0.1", lambda: (True, "as printed"), what="the first preactivation")

    text = ("# 1 Mix\n\nThe first weight is 0.5, on the value 0.3.\n\nThe second weight is 0.5 too.\n\n"
            "It reads $r_0-0.25r_1+0.1$.\n")
    assert not audit(parse(text, path="h2.md"), [d]).failed
    # the first 0.5 deleted: its claim does not take the 0.5 after the 0.3, which the order gives the second
    rep = audit(parse(text.replace("is 0.5, on", "is , on"), path="h2.md"), [d])
    assert [(m.what, m.lines[0] <= 3 <= m.lines[1]) for m in rep.missing] == [("the first weight", True)]
    # a restated formula of two numbers must be printed: one of them deleted or its sign doubled, it fails there
    for edit in ("r_0-r_1+0.1", "r_0-0.25r_1+", "r_0--0.25r_1+0.1"):
        rep = audit(parse(text.replace("r_0-0.25r_1+0.1", edit), path="h2.md"), [d])
        assert rep.failed and (rep.errata or rep.missing), edit
        assert all((e.line == 7) for e in rep.errata) and all(m.lines[0] <= 7 <= m.lines[1] for m in rep.missing)


def test_a_table_input_with_a_cell_left_empty_is_missing_at_its_row():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("tab", title="a table of inputs", source="tab.txt")

    @d.section("1 Embeddings")
    def emb(s):
        s.given(sp.Matrix([[sp.Rational(1, 5), sp.Rational(-1, 10)], [sp.Rational(1, 2), sp.Rational(3, 10)]]),
                what="E", at="Table 1")

    text = "1 Embeddings\n\nTable 1: the rows.\n\nID\tToken\tj=0\tj=1\n0\ta\t0.2\t-0.1\n1\tb\t0.5\t0.3\n"
    assert not audit(parse(text, path="tab.txt"), [d]).failed
    rep = audit(parse(text.replace("0.5\t0.3", "0.5\t"), path="tab.txt"), [d])
    assert rep.failed and [m.lines for m in rep.missing] == [(7, 7)]


def test_an_input_anchored_to_its_line_is_found_there_and_wrong_there():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("target", title="a target set in code", source="t.md")

    @d.section("1 Loss")
    def loss(s):
        s.given(sp.Rational(1, 2), what="target in the code", near="target = X.new_tensor(")
        s.claim("0.5", sp.Rational(1, 2), what="the loss factor", near="loss = 0.5 *")

    text = "# 1 Loss\n\n```python\ntarget = X.new_tensor([[0.5]])\nloss = 0.5 * (p - target).square().sum()\n```\n"
    rep = audit(parse(text, path="t.md"), [d])
    assert not rep.failed and [t.attribution.what for t in rep.tokens if t.text == "0.5"] == [
        "target in the code", "the loss factor"]
    rep = audit(parse(text.replace("[[0.5]]", "[[0.6]]"), path="t.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(4, "0.6", "0.5")]
    rep = audit(parse(text.replace("target = X.new_tensor", "t = X.new_tensor"), path="t.md"), [d])
    assert [m.what for m in rep.missing] == ["target in the code: no line reads 'target = X.new_tensor('"]


def test_an_input_whose_anchor_ends_with_its_number_is_that_number_not_another_of_the_line():
    """near="rather than 3" pins the 3 there: deleted, the input is missing at its line, though "index 3" follows."""
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("tags", title="tag indices", source="tags.md")

    @d.section("1 Tags")
    def tags(s):
        s.given(sp.Integer(4), sp.Integer(3), what=("ADJ's index", "the index ADJ does not have"),
                near="index 4 rather than 3")

    text = "# 1 Tags\n\nADJ sits at index 4 rather than 3: index 3 belongs to ADV.\n"
    rep = audit(parse(text, path="tags.md"), [d])
    assert not rep.failed
    assert [t.attribution.what for t in rep.tokens if t.text in "34"][:2] == ["ADJ's index",
                                                                                   "the index ADJ does not have"]
    rep = audit(parse(text.replace("rather than 3", "rather than "), path="tags.md"), [d])
    assert rep.failed and [(m.what, m.lines) for m in rep.missing] == [("the index ADJ does not have", (3, 3))]


def test_a_deleted_table_entry_is_not_taken_from_a_word_after_the_table():
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import audit

    d = Derivation("tab2", title="a table claim of zero", source="tab2.txt")

    @d.section("1 Weights")
    def w(s):
        s.table("Table 1", [["0.4", "0"]], sp.Matrix([[sp.Rational(2, 5), 0]]), cols=["open", "causal"])

    text = "1 Weights\n\nTable 1: the weights.\n\nsource\topen\tcausal\n0: a\t0.4\t0\n\nThe causal weight is zero.\n"
    assert not audit(parse(text, path="tab2.txt"), [d]).failed
    rep = audit(parse(text.replace("0.4\t0", "0.4\t"), path="tab2.txt"), [d])
    assert rep.failed and [m.lines for m in rep.missing] == [(6, 6)]


def test_a_section_ends_at_the_next_heading_of_its_level_that_no_section_names(tmp_path):
    """Issue 13: a heading whose numbers are all the page's own arithmetic needs no derivation section to bound the
    section before it; a deeper heading stays inside its section, and a plain text heading keeps the old rule."""
    import sympy as sp

    from symseq import Derivation
    from symseq.audit import read
    from symseq.read.sections import level, locate

    d = Derivation("levels", title="levels", source="levels.md")

    @d.section("1. Weights")
    def weights(s):
        s.given(sp.Rational(1, 2), what="w")
        s.claim("0.25", sp.Rational(1, 4), what="w²")

    @d.section("3. Output")
    def output(s):
        s.claim("0.75", sp.Rational(3, 4), what="w + w²")

    md = ("# Levels\n\n## 1. Weights\n\nw = 0.5\n\n### A detail\n\nw² = 0.25\n\n## 2. By hand\n\n"
          "0.5 · 2 = 1.0\n\n## 3. Output\n\nThe sum is 0.75.\n")
    (tmp_path / "levels.md").write_text(md, encoding="utf-8")
    doc = read(tmp_path / "levels.md")
    assert [level(doc, h.line) for h in doc.headings] == [1, 2, 3, 2, 2]
    ranges = {loc.section.title: (loc.start, loc.end) for loc in locate(doc, [d]).values()}
    # "## 2. By hand" (line 11) ends "1. Weights"; "### A detail" (line 7) does not
    assert ranges == {"1. Weights": (3, 10), "3. Output": (15, 17)}
    rep = audit_file(tmp_path / "levels.md", [d])
    cls = {(t.line, t.text): t.attribution for t in rep.tokens}
    assert cls[(9, "0.25")].verdict == "covered" and cls[(13, "1.0")].verdict == "covered"
    assert cls[(13, "1.0")].statement is not None and not rep.failed  # 0.5 · 2 checked with no section

    tex = "\\section{Weights}\n$w = 0.5$\n\\subsection{Detail}\n$w^2 = 0.25$\n\\section{By hand}\n$0.5 + 0.5 = 1$\n"
    (tmp_path / "levels.tex").write_text(tex, encoding="utf-8")
    t = Derivation("levels-tex", title="levels", source="levels.tex")
    t.section("Weights")(lambda s: s.given(sp.Rational(1, 2), what="w"))
    tdoc = read(tmp_path / "levels.tex")
    assert [level(tdoc, h.line) for h in tdoc.headings] == [2, 3, 2]
    (loc,) = locate(tdoc, [t]).values()
    assert (loc.start, loc.end) == (1, 4)
    txt = "1. Weights\n\nw = 0.5\n\n2. By hand\n\n0.5 + 0.5 = 1\n"  # plain headings: no level, the old rule
    (tmp_path / "levels.txt").write_text(txt, encoding="utf-8")
    p = Derivation("levels-txt", title="levels", source="levels.txt")
    p.section("1. Weights")(lambda s: s.given(sp.Rational(1, 2), what="w"))
    pdoc = read(tmp_path / "levels.txt")
    (loc,) = locate(pdoc, [p]).values()
    assert level(pdoc, loc.heading) is None and loc.end == pdoc.n


@needs_seeds
@pytest.mark.parametrize("name", ["000_30e9e4099f2cd2dc.txt", "001_d42a515eb3cd140c.txt", "003_b76f00753924d0c1.txt",
                                  "004_daeab95066cb0286.txt"])
def test_the_pages_shipped_with_the_bundled_derivations_are_the_seed_handouts(name):
    """The bundled derivations read their pages from copies shipped beside them (so that ``symseq verify`` runs on a
    machine without the seeds); each copy is the seed handout byte for byte."""
    from symseq.authoring.page import find_page

    shipped = Path(__file__).resolve().parents[1] / "derivations" / name
    assert shipped.read_bytes() == (SEEDS / name).read_bytes()
    assert find_page(name, shipped.parent / "week08_decoder.py").read_bytes() == shipped.read_bytes()
