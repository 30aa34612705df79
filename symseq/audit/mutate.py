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

Four more held-out kinds edit the page's other mathematics, read from its text (:func:`page_mutations`):

* ``shape``: a printed shape transposed (``T\\times d_v`` → ``d_v\\times T``, ``\\mathbb R^{T\\times D}`` →
  ``\\mathbb R^{D\\times T}``, ``7×5`` → ``5×7``), where its two sizes differ;
* ``integer``: an integer of a formula one up: an exponent (``e^{2w-1}`` → ``e^{2w-2}``), a subscript
  (``h_{t-1}`` → ``h_{t-2}``, ``x_2`` → ``x_3``), a loop bound (``t=T-1,\\ldots,0`` → ``…,1``); only integers the
  reader marks as a subscript or superscript, or that stand inside mathematics (``\\(…\\)``, ``$…$``, a line that
  is a formula) as an index or a quantity no claim covers; never a list marker, heading, label or year;
* ``word``: a comparison word of a sentence flipped, its case kept (larger ↔ smaller, increases ↔ decreases,
  same ↔ different, positive ↔ negative, more ↔ less, largest ↔ smallest, higher ↔ lower, vanishes ↔ explodes,
  above ↔ below, greater → less); *more*/*less* only before *than*, *above*/*below* only before a number or a
  formula (not "the table below");
* ``copy``: a number replaced by another number printed in the same section of the page (between two headings),
  of the same kind (a scalar by a scalar, a vector or matrix by one of its shape, a percentage by a percentage)
  and of a different value, drawn with the plan's seed.

An edit of these kinds is caught as a ``repeat`` is: the audit fails and names the edited line. Edits that leave
a true statement and can be told from the text are *not counted*, with the reason (:attr:`Mutation.excuse`): a
word flipped in a question, or in a quoted word.

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

import bisect
import random
import re
from dataclasses import dataclass

from ..errors import SymseqError
from ..read.document import Document, relayout
from .matching import _with_token
from .report import AuditReport
from .structure import claim_tokens
from .words import comparisons, display_lines, formula_line, math_spans, skipped
from ..read import MINUS, SIGNED_NUMBER, Token, scan

KINDS = ("last", "middle", "sign", "swap", "delete")
# kinds the benchmark runs on request (--kinds): edits the audit was not tuned to
HELD_OUT = ("repeat", "shape", "integer", "word", "copy")
PAGE_KINDS = ("shape", "integer", "word", "copy")  # held-out kinds read from the page's text (page_mutations)
_NUM = SIGNED_NUMBER


@dataclass(frozen=True)
class Mutation:
    """One edit of one token: ``line`` (1-based), the token's columns, its text before and after.

    ``note`` says what was edited (the token's verdict and rule in the clean audit, or the word's sentence kind);
    ``excuse``, when not empty, why the edited text still states something true: such an edit is not counted."""

    kind: str
    line: int
    start: int
    end: int
    before: str
    after: str
    note: str = ""
    excuse: str = ""

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


def plan(report: AuditReport, doc: Document, *, kinds=KINDS, seed: int = 0) -> list[Mutation]:
    """Every mutation of every covered quantity token of a clean audit ``report`` of ``doc``, then the edits of
    the page's text of the kinds of :data:`PAGE_KINDS` among ``kinds`` (:func:`page_mutations`; ``seed`` draws
    the number a ``copy`` puts in). The same report, text and seed give the same list."""
    minus = MINUS if any(MINUS in ln for ln in doc.lines) else "-"
    out = []
    for tok in report.tokens:
        if tok.attribution.verdict != "covered":
            continue
        for kind, after in mutations(tok, minus).items():
            if kind in kinds:
                out.append(Mutation(kind, tok.line, tok.start, tok.end, tok.text, after, note="covered"))
    page = tuple(k for k in PAGE_KINDS if k in kinds)
    if page:
        out += page_mutations(report, doc, kinds=page, seed=seed)
    return out


# ---------------------------------------------------------------------------------------------------------------
# edits of the page's other mathematics: shapes, integers of formulas, comparison words, copied numbers
# ---------------------------------------------------------------------------------------------------------------

# the operator of a shape token's text: 7×5, 7\times5, 9 \times d_k, 16x16
_TIMES_OP = re.compile(r"\s*(?:\\times(?![A-Za-z])|×)\s*|(?<=\d)x(?=\d)")
# a size written with symbols: T, d_v, d_{\mathrm{model}}, h{d}_v (a product of at most three)
_ATOM = r"(?:\{[A-Za-z]\}|\\ell|[A-Za-z])(?:_\{[^{}\s$]*\}|_[A-Za-z0-9])?"
_SYMBOL_SHAPE = re.compile(rf"(?<![\w\\}}^_])((?:{_ATOM}){{1,3}})(\s*(?:\\times(?![A-Za-z])|×)\s*)"
                           rf"((?:{_ATOM}){{1,3}})(?![\w{{]|\s*(?:\\times|×))")
_REALS_BEFORE = re.compile(r"(?:\\mathbb\s*\{?\s*R\s*\}?\}?|\\R|(?<![A-Za-z])R)\s*\^\s*\{\s*$")
_ARRAY_AFTER = re.compile(r"\s*(?:\$|\\\))?\s*(?:matrix|matrices|array|arrays|block|tensor|grid|table)\b")

class _Page:
    """The layout a page edit reads: skipped lines, formula spans per line, display lines."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.skip = skipped(doc)
        self.display = display_lines(doc)
        self._spans: dict = {}

    def spans(self, line: int) -> list[tuple[int, int]]:
        if line not in self._spans:
            self._spans[line] = math_spans(self.doc.lines[line - 1])
        return self._spans[line]

    def in_math(self, line: int, start: int, end: int) -> bool:
        if line in self.display:
            return True
        spans = self.spans(line)
        if any(a <= start and end <= b for a, b in spans):
            return True
        return not spans and formula_line(self.doc.lines[line - 1])


def _verdict(tok: Token) -> str:
    return tok.attribution.verdict if tok.attribution is not None else ""


def _note(tok: Token) -> str:
    v = _verdict(tok)
    return f"{v} ({tok.rule})" if tok.rule else v


def _flat(s: str) -> str:
    return re.sub(r"[{}\s]", "", s)


def _transposed(a: str, op: str, b: str) -> str:
    """``b op a``, with a space after ``\\times`` when a letter follows it (``H\\times1`` → ``1\\times H``)."""
    if op.endswith("\\times") and a[:1].isalpha():
        op += " "
    return b + op + a


def _shapes(report: AuditReport, page: _Page) -> list[Mutation]:
    out, taken = [], {}
    for t in report.tokens:  # shapes the reader reads: 7×5, 7\times5, D × 1, 9 \times d_k
        if t.kind != "shape" or len(t.entries) != 2 or t.line in page.skip:
            continue
        taken.setdefault(t.line, []).append((t.start, t.end))
        m = _TIMES_OP.search(t.text)
        if m is None:
            continue
        ln = page.doc.lines[t.line - 1]
        if ln[t.end:t.end + 1].isalnum() or ln[t.end:t.end + 1] in "{_^":
            continue  # the last size goes on (D\times3D): the reader's shape is not the printed one
        a, op, b = t.text[:m.start()], m.group(0), t.text[m.end():]
        if _flat(a) != _flat(b):
            out.append(Mutation("shape", t.line, t.start, t.end, t.text, _transposed(a, op, b), note=_note(t)))
    doc = page.doc
    for k, ln in enumerate(doc.lines, 1):  # sizes written with symbols, inside a formula: T\times d_v
        if k in page.skip or ("\\times" not in ln and "×" not in ln):
            continue
        spans = page.spans(k)
        for m in _SYMBOL_SHAPE.finditer(ln):
            a, op, b = m.group(1), m.group(2), m.group(3)
            if _flat(a) == _flat(b) or ln[:m.start()].rstrip().endswith(("\\times", "×")):
                continue
            if any(s < m.end() and m.start() < e for s, e in taken.get(k, ())):
                continue
            span = next(((s, e) for s, e in spans if s <= m.start() and m.end() <= e), None)
            if span is None and k not in page.display:
                continue
            whole = span is not None and ln[span[0]:span[1]].strip() == m.group(0).strip()
            bracketed = ln[:m.start()].endswith("(") and ln[m.end():m.end() + 1] == ")"  # (1\times D)(D\times H)
            if whole or bracketed or _REALS_BEFORE.search(ln, 0, m.start()) or _ARRAY_AFTER.match(ln, m.end()):
                out.append(Mutation("shape", k, m.start(), m.end(), m.group(0), _transposed(a, op, b),
                                    note="symbols"))
    return sorted(out, key=lambda m: (m.line, m.start))


_INDEX_RULES = ("index value", "index arithmetic")


def _integers(report: AuditReport, page: _Page) -> list[Mutation]:
    out = []
    for t in report.tokens:
        if t.line in page.skip or t.kind != "number" or not (t.text.isascii() and t.text.isdigit()) \
                or len(t.text) > 6:
            continue
        v = _verdict(t)
        if v in ("covered", "reported", "wrong"):
            continue  # a number a claim covers is the other kinds' edit
        if t.script in ("sub", "sup"):
            note = "subscript" if t.script == "sub" else "superscript"
        elif t.script == "" and (t.rule in _INDEX_RULES or v == "uncovered") and page.in_math(t.line, t.start, t.end):
            note = t.rule or "quantity no claim covers"
        else:
            continue
        after = str(int(t.text) + 1).zfill(len(t.text))
        out.append(Mutation("integer", t.line, t.start, t.end, t.text, after, note=note))
    return sorted(out, key=lambda m: (m.line, m.start))


def _words(page: _Page) -> list[Mutation]:
    excuses = {"question": "a question: it states nothing true or false", "quoted": "a quoted word: mentioned, not used"}
    return [Mutation("word", c.line, c.start, c.end, c.word, c.flipped, note=c.use, excuse=excuses.get(c.use, ""))
            for c in comparisons(page.doc)]


def _scalar_class(t: Token):
    """What a copied number must share with the number it replaces: its kind (a decimal or an integer, a
    fraction, a root; a vector or matrix and its shape) and whether it is a percentage."""
    if t.kind == "number":
        e = t.entries[0].lower()
        return ("number", e.endswith("%"), "." in e or "e" in e)
    if t.kind in ("fraction", "root"):
        return (t.kind, False)
    if t.kind in ("vector", "matrix"):
        return (t.kind, t.shape, any(e.endswith("%") for e in t.entries))
    return None


def _values(t: Token):
    from ..read import number_value

    vals = tuple(number_value(e) for e in t.entries)
    return vals if all(v is not None for v in vals) else tuple(t.entries)


def _copies(report: AuditReport, page: _Page, seed: int) -> list[Mutation]:
    heads = sorted(h.line for h in page.doc.headings)
    quantities = [t for t in report.tokens if t.script == "" and t.line not in page.skip and t.tier == ""
                  and _verdict(t) != "structural" and _scalar_class(t) is not None]
    sections: dict = {}
    for t in quantities:
        sections.setdefault(bisect.bisect_right(heads, t.line), []).append(t)
    out = []
    for section in sections.values():
        for t in section:
            if _verdict(t) not in ("covered", "uncovered"):
                continue
            cls, vals = _scalar_class(t), _values(t)
            donors: dict = {}
            for d in section:
                if d is not t and _scalar_class(d) == cls and _values(d) != vals and d.text not in donors:
                    donors[d.text] = d
            if not donors:
                continue
            d = random.Random(f"copy {seed} {t.line} {t.start}").choice(list(donors.values()))
            out.append(Mutation("copy", t.line, t.start, t.end, t.text, d.text,
                                note=f"{_verdict(t)}, from line {d.line}"))
    return sorted(out, key=lambda m: (m.line, m.start))


def page_mutations(report: AuditReport, doc: Document, *, kinds=PAGE_KINDS, seed: int = 0) -> list[Mutation]:
    """The edits of the page's text of each kind of ``kinds`` (see the module docstring), each kind in reading
    order: shapes transposed, integers of formulas one up, comparison words flipped, numbers copied from their
    section (the copied number drawn with ``seed``). ``report`` is a clean audit of ``doc``, whose verdicts and
    rules say which tokens are quantities, labels or indices."""
    page = _Page(doc)
    out = []
    for kind in PAGE_KINDS:
        if kind not in kinds:
            continue
        if kind == "shape":
            out += _shapes(report, page)
        elif kind == "integer":
            out += _integers(report, page)
        elif kind == "word":
            out += _words(page)
        else:
            out += _copies(report, page, seed)
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
    equivalent: bool = False  # not caught, and the edited text still states a true value: not counted
    reason: str = ""  # why it is not counted (the mutation's excuse, or the claim restated that still holds)

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
    if m.kind not in ("last", "middle", "sign", "swap", "copy"):
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
    """Audit ``doc`` with ``m`` made and say whether it was caught (see the module docstring). A mutation with an
    excuse that is not caught is not counted (:attr:`Verdict.equivalent`, with the excuse as its reason).

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
        entries = [x for t in scan(m.before) for x in t.entries]  # the value as printed before, entry by entry
        rounding = any(_plain(e.correct) in before or before in _plain(e.correct) or
                       [x for t in scan(e.correct) for x in t.entries] == entries or
                       any(_plain(c) in before or _plain(c) in canon for c in e.correct.split(", ")) for e in at)
    said = "; ".join([f"line {e.line}: printed {e.printed}, correct {e.correct}" for e in rep.errata[:3]] +
                     [f"missing {x.printed} ({x.location})" for x in rep.missing[:3]])
    v = Verdict(m, rep.failed, bool(at or near), rounding, said)
    if not v.caught and m.excuse:
        v.equivalent, v.reason = True, m.excuse
    elif not v.caught and clean is not None and equivalent(m, clean, derivations, dps=dps):
        v.equivalent, v.reason = True, "the claim restated with the edit still holds"
    return v
