"""A public worked example as a fixture: one query attending to two tokens, by hand ("The dog ran quickly").

Source: https://github.com/BugCatcherXO/Building-LLama4-from-Scratch/blob/42e98a4468e666a39dd67e47fc1fa99e7f184b22/llama_4_Multi-Head-Latent-Attention_explanation.ipynb,
rendered in ``tests/data/examples/attention-dog-ran-quickly-notebook.ipynb`` with its derivation in
``tests/data/examples/derivations/attention_dog_ran_quickly_notebook.py``.

Every printed number holds (checked below in plain mpmath), so this page is one where an edit the audit misses
passes. Measured with ``benchmarks/audit_mutations.py --only attention-dog``: before the fixes it prompted, 16 of
115 edits of its covered numbers exited 0. Its chains are written one display per line (``\\[ … \\]``), with
names in LaTeX (``\\alpha_{dog} \\cdot V_{dog}``), and:

* ``\\alpha_{dog}`` was no name the page's arithmetic could bind, so the copy of α_dog = 0.42 and of the values
  in ``= 0.42 \\cdot [0.12, 0.84, 0.51] + 0.58 \\cdot [0.62, 0.24, 0.33]`` were checked only against the result
  within their rounding (0.43 there still gave [0.41, 0.49, 0.41] within it);
* a number deleted from ``(0.73)(0.74)`` left ``(0.73)()``, from ``… ≈ 1.2):`` left ``≈ )``, and a value vector
  deleted at the end of a display left ``0.58 \\cdot`` before ``\\]``: none was a lost number.

Two false all-clears remain for the audit alone and are closed by the derivation: the 1.2 of "taking the score
of quickly to be ≈ 1.2" is pinned with ``near=`` (otherwise the given takes the 1.2 of e^{1.2} below when the
prose is edited), and the weights are ``s.step`` claims whose operands are the score 0.889 and 1.2 (an edited
0.889 in e^{0.889} leaves α ≈ 0.42 true).
"""

from __future__ import annotations

from mpmath import exp, mp, mpf

from symseq.audit import audit_document

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "attention-dog-ran-quickly-notebook.ipynb"
NAME = "attention-dog-ran-quickly-notebook"


def _model():
    mp.dps = 30
    q, k = [mpf(x) for x in ("0.22", "0.64", "0.73")], [mpf(x) for x in ("0.54", "0.36", "0.74")]
    v_dog, v_quickly = [mpf(x) for x in ("0.12", "0.84", "0.51")], [mpf(x) for x in ("0.62", "0.24", "0.33")]
    products = [a * b for a, b in zip(q, k)]
    score = sum(products)
    a_dog = exp(score) / (exp(score) + exp(mpf("1.2")))
    a_quickly = 1 - a_dog
    out = [a_dog * d + a_quickly * u for d, u in zip(v_dog, v_quickly)]
    return dict(products=products, score=score, a_dog=a_dog, a_quickly=a_quickly, out=out)


def test_every_printed_number_holds_in_plain_mpmath():
    m = _model()
    # exact: 0.22 × 0.54 = 0.1188 and so on, to the 30 digits mpmath carries
    assert all(abs(p - mpf(x)) < mpf(10) ** -28 for p, x in zip(m["products"], ("0.1188", "0.2304", "0.5402")))
    assert rounds_to(m["score"], "0.889") and abs(m["score"] - mpf("0.8894")) < mpf(10) ** -28
    assert rounds_to(m["a_dog"], "0.42") and rounds_to(m["a_quickly"], "0.58")
    page = exp(mpf("0.889")) / (exp(mpf("0.889")) + exp(mpf("1.2")))  # the page's formula, from the rounded score
    assert rounds_to(page, "0.42") and rounds_to(1 - page, "0.58")
    assert all(rounds_to(v, p) for v, p in zip(m["out"], ("0.41", "0.49", "0.41")))
    from_printed = [mpf("0.42") * d + mpf("0.58") * u for d, u in
                    zip((mpf("0.12"), mpf("0.84"), mpf("0.51")), (mpf("0.62"), mpf("0.24"), mpf("0.33")))]
    assert all(rounds_to(v, p) for v, p in zip(from_printed, ("0.41", "0.49", "0.41")))


def test_the_audit_passes_with_every_number_covered(report):
    assert not report.failed, report.failures()
    c = report.counts
    assert c.wrong == 0 and c.uncovered == 0 and c.covered == c.quantity >= 25


def _edited(derivation, old, new):
    from symseq.audit import read
    from symseq.read.document import relayout

    doc = read(MD)
    lines = [ln.replace(old, new, 1) if old in ln else ln for ln in doc.lines]
    assert lines != doc.lines, old
    return audit_document(relayout(doc, lines), [derivation])


def test_an_edited_copy_in_a_chain_of_latex_names_fails(derivation):
    """α_dog copied as 0.43 into α_dog·V_dog + … = 0.43·[…] + … = [0.41, 0.49, 0.41]: 0.43 is not the 0.42 bound
    to \\alpha_{dog}; a value vector copied with an edited entry is not V_dog."""
    for old, new in (("= 0.42 \\cdot", "= 0.43 \\cdot"), ("0.42 \\cdot [0.12, 0.84, 0.51]", "0.42 \\cdot [0.12, 0.84, 0.52]")):
        rep = _edited(derivation, old, new)
        assert rep.failed and 101 in {e.line for e in rep.errata}, (new, rep.failures())


def test_a_deleted_number_next_to_brackets_or_at_the_end_of_a_display_fails(derivation):
    for old, new in (("(0.73)(0.74)", "(0.73)()"), ("to be ≈ 1.2)", "to be ≈ )"),
                     ("+ 0.58 \\cdot [0.62, 0.24, 0.33]", "+ 0.58 \\cdot ")):
        rep = _edited(derivation, old, new)
        assert rep.failed, (new, rep.failures())
