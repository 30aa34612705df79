"""Mutation testing of the audit: edit one printed number of a clean handout and see whether the audit says so.

The audit's green is worth what it catches. A mutation edits one covered
quantity token of a text that audits clean, in one of five ways an author's
slip (or a careless edit) would:

* ``last``: the last digit of the token, one up (0.388 → 0.389; 9 wraps to 0);
* ``middle``: the middle digit of a token of three digits or more (0.388 → 0.398);
* ``sign``: the sign of its first non-zero number flipped (0.388 → −0.388, −0.144 → 0.144);
* ``swap``: two neighbouring entries of a vector or matrix that differ, exchanged ([0.8,0.4] → [0.4,0.8]);
* ``delete``: the token removed from its line;
* ``repeat`` (held out, :data:`HELD_OUT`): the token's line printed again just below it, with the token's last
  digit one up in the copy: a second, false value of a quantity the page has just printed (issue 39).

:func:`judge` audits the mutated text and says whether the mutation was
caught: the audit fails (exit status 1) and names the mutated line, as an
erratum there or as a claim missing from the text whose expected place
includes it; for a digit or sign edit, the erratum's correct rounding is the
number as it was printed before the edit.

Some edits leave a true statement: ``\\cos 3`` flipped to ``\\cos -3``, or a
sign inside an even function. :func:`equivalent` tells them apart by the claim
that covered the token, restated with the edited text and checked exactly; a
benchmark counts them apart from the edits that must be caught.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..errors import SymseqError
from ..read.document import Document, relayout
from .matching import _with_token
from .report import AuditReport
from .structure import claim_tokens
from ..read import MINUS, SIGNED_NUMBER, Token, scan

KINDS = ("last", "middle", "sign", "swap", "delete")
HELD_OUT = ("repeat",)  # kinds the benchmark runs on request (--kinds): edits the audit was not tuned to
_NUM = SIGNED_NUMBER


@dataclass(frozen=True)
class Mutation:
    """One edit of one token: ``line`` (1-based), the token's columns, its text before and after."""

    kind: str
    line: int
    start: int
    end: int
    before: str
    after: str

    def apply(self, lines: list[str]) -> list[str]:
        """The lines with this edit made (a new list): for ``repeat``, the edited line inserted below the line."""
        out = list(lines)
        ln = out[self.line - 1]
        edited = ln[:self.start] + self.after + ln[self.end:]
        if self.kind == "repeat":
            out.insert(self.line, edited)
        else:
            out[self.line - 1] = edited
        return out

    @property
    def target(self) -> int:
        """The line the edited number stands on once the edit is made (the copy's, for ``repeat``)."""
        return self.line + 1 if self.kind == "repeat" else self.line

    def __str__(self) -> str:
        return f"line {self.line}:{self.start} {self.kind}: {self.before!r} -> {self.after!r}"


def _bump(text: str, k: int) -> str:
    return text[:k] + str((int(text[k]) + 1) % 10) + text[k + 1:]


def _numbers(text: str) -> list[re.Match]:
    """The plain numbers of a token's text, outside LaTeX command names."""
    return [m for m in _NUM.finditer(text) if not (m.start() > 0 and text[m.start() - 1].isalpha())]


def _value(m: re.Match) -> float:
    return float(m.group(0).replace(MINUS, "-"))


def mutations(tok: Token, minus: str = MINUS) -> dict[str, str]:
    """The edited text of ``tok`` for each kind of :data:`KINDS` that applies to it."""
    text, out = tok.text, {}
    digits = [k for k, ch in enumerate(text) if ch.isdigit()]
    nums = _numbers(text)
    if digits:
        out["last"] = _bump(text, digits[-1])
        if len(digits) >= 3:
            out["middle"] = _bump(text, digits[len(digits) // 2])
    if tok.kind != "shape":
        m = next((m for m in nums if _value(m) != 0), None)
        if m is not None:
            s = m.group(0)
            flipped = s[1:] if s[0] in "-\u2212" else minus + s
            out["sign"] = text[:m.start()] + flipped + text[m.end():]
    if tok.kind in ("vector", "matrix") and len(nums) >= 2:
        for a, b in zip(nums, nums[1:]):
            if _value(a) != _value(b):
                out["swap"] = (text[:a.start()] + b.group(0) + text[a.end():b.start()] + a.group(0)
                               + text[b.end():])
                break
    out["delete"] = ""
    if "last" in out:
        out["repeat"] = out["last"]
    return out


def plan(report: AuditReport, doc: Document, *, kinds=KINDS) -> list[Mutation]:
    """Every mutation of every covered quantity token of a clean audit ``report`` of ``doc``."""
    minus = MINUS if any(MINUS in ln for ln in doc.lines) else "-"
    out = []
    for tok in report.tokens:
        if tok.attribution.verdict != "covered":
            continue
        for kind, after in mutations(tok, minus).items():
            if kind in kinds:
                out.append(Mutation(kind, tok.line, tok.start, tok.end, tok.text, after))
    return out


def sample(muts: list[Mutation], per_kind: int, seed: int = 0) -> list[Mutation]:
    """At most ``per_kind`` mutations of each kind, drawn with a fixed seed."""
    rng = random.Random(seed)
    out = []
    for kind in KINDS + HELD_OUT:  # a fixed order: the same draws for the same kinds
        of_kind = [m for m in muts if m.kind == kind]
        out += of_kind if len(of_kind) <= per_kind else rng.sample(of_kind, per_kind)
    return out


@dataclass
class Verdict:
    """What the audit said of one mutation."""

    mutation: Mutation
    failed: bool  # the audit's exit status would be 1
    at_line: bool  # an erratum or a missing claim names the mutated line
    rounding: bool  # the erratum at the line gives the number as it was before the edit (digit and sign edits)
    said: str = ""
    equivalent: bool = False  # not caught, and the edited text still states a true value (:func:`equivalent`)

    @property
    def caught(self) -> bool:
        return self.failed and self.at_line and self.rounding


def _plain(s: str) -> str:
    """A printed or reported value without spacing, braces, parentheses and backslashes: ``\\log3`` and
    SymPy's ``log(3)`` alike."""
    return re.sub(r"[\s\\(){}]", "", s.replace(MINUS, "-"))


def equivalent(m: Mutation, clean: AuditReport, derivations: list, *, dps: int = 50) -> bool:
    """Whether edit ``m`` of a number inside a claim's printed formula leaves the claim true: the claim that
    covered the token in the unedited audit ``clean``, with that token's text replaced by the edit, holds
    exactly (``-0.1+\\cos -3`` is ``-0.1+\\cos 3``). False when that cannot be told: the token not covered, its
    claim not found once, or its tokens not matched one for one with the claim's printed numbers."""
    if m.kind in ("delete", "repeat"):
        return False
    covered = [t for t in clean.tokens if t.attribution.verdict == "covered"]
    hit = next((t for t in covered if (t.line, t.start, t.end) == (m.line, m.start, m.end)), None)
    if hit is None or hit.attribution.claim is None:
        return False
    claims = [c for d in derivations for s in d.sections for c in s.claims if c.id == hit.attribution.claim_id]
    if len(claims) != 1:
        return False
    claim = claims[0]
    try:
        refs = claim_tokens(claim.printed)
    except SymseqError:  # a printed string the tokenizer cannot read is not judged equivalent
        return False
    mine = [t for t in covered if t.attribution.claim_id == hit.attribution.claim_id]
    k = mine.index(hit)
    if len(refs) != len(mine) or refs[k].key != hit.key or len(refs) < 2:
        return False  # a lone number edited is never the same statement
    return _with_token(claim, refs[k], m.after).check(dps).status == "ok"


def judge(m: Mutation, doc: Document, derivations: list, *, clean: AuditReport | None = None,
          dps: int = 50) -> Verdict:
    """Audit ``doc`` with ``m`` made and say whether it was caught (see the module docstring).

    ``clean`` is the audit of the unedited text. With it, a mutation not caught is checked for being
    :func:`equivalent`, and when that text has errata of its own (a worked example with a slip) only the errata
    and missing claims that the edit added count."""
    from . import audit_document

    rep = audit_document(relayout(doc, m.apply(doc.lines)), derivations, dps=dps)
    baseline = clean if clean is not None and clean.failed else None
    old_errata = {(e.line, e.printed, e.source) for e in baseline.errata} if baseline else set()
    old_missing = {x.id for x in baseline.missing} if baseline else set()
    at = [e for e in rep.errata if e.line == m.target and (e.line, e.printed, e.source) not in old_errata]
    near = [x for x in rep.missing if x.lines and x.lines[0] <= m.target <= x.lines[1] and x.id not in old_missing]
    rounding = True
    if m.kind in ("last", "middle", "sign") and at:  # a repeat is caught at the copy's line, whichever number of it
        before = _plain(m.before)
        canon = {_plain(x) for t in scan(m.before) for x in t.entries}  # 1/\sqrt{2} as 1/√2, \tfrac25 as 2/5
        rounding = any(_plain(e.correct) in before or before in _plain(e.correct) or
                       any(_plain(c) in before or _plain(c) in canon for c in e.correct.split(", ")) for e in at)
    said = "; ".join([f"line {e.line}: printed {e.printed}, correct {e.correct}" for e in rep.errata[:3]] +
                     [f"missing {x.printed} ({x.location})" for x in rep.missing[:3]])
    v = Verdict(m, rep.failed, bool(at or near), rounding, said)
    if not v.caught and clean is not None:
        v.equivalent = equivalent(m, clean, derivations, dps=dps)
    return v
