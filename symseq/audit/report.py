"""The result of an audit: every token's classification, the errata, the missing claims, and coverage.

One report for both audits: against derivations (:func:`symseq.audit.matching.audit`, with the page's own arithmetic
counted in it, :meth:`AuditReport.add_arithmetic`), and of a page no derivation speaks of, whose tokens only its own
arithmetic accounts for (:meth:`AuditReport.of_page`). One verdict (:meth:`AuditReport.failures`), one JSON document
(:meth:`AuditReport.as_json`), one terminal report (:mod:`symseq.present.audit`).

The verdict on a token (``Token.attribution.verdict``, :class:`symseq.audit.attribution.Attribution`, which also
names the claim, input, page statement or rule behind it):

* ``covered``: a claim of a derivation prints it and holds, or it is an
  input the derivation declares (``section.given``) with the same value, or a statement of the page's own
  arithmetic that holds from its printed operands prints it;
* ``wrong``: a claim prints it and does not hold, or it is a claim's or an
  input's number as edited in the text (an erratum, with the correct value);
* ``uncovered``: a quantity no derivation checks;
* ``structural``: not a quantity (section numbers, years, indices …), with its reason;
* ``reported``: declared by a derivation as not derivable (``section.reported``), with its reason.

Coverage is covered quantity tokens over all quantity tokens (covered, wrong
and uncovered); structural and reported tokens are not in the denominator.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path

from ..verify.claims import Location
from .attribution import VERDICTS

CLASSES = VERDICTS
REPEAT_REACH = 40  # lines below a line within which a line printed again is compared with it (add_repeats)
REPEAT_WORDS = 12  # letters outside its numbers a line needs to be compared with another (add_repeats)
SCHEMA = "symseq-audit/2"  # the name and version of the JSON documents of symseq audit (both modes)


@dataclass
class Erratum:
    """A number the handout prints wrongly: where, as printed, the correct value and the digit at fault.

    ``line`` is None for a claim that does not hold but whose printed number was not located in the text
    (it still fails the audit)."""

    line: int | None
    printed: str
    correct: str
    fault: str
    source: str  # the claim id, or the input's location
    value: str = ""  # the exact or 12-digit value
    context: str = ""
    kind: str = "claim"  # claim, input, arithmetic, or statement (one that cannot hold, or is false while its
    # printed result is right): its ``fault`` says why
    also: tuple = ()  # other claims printed by the same text and wrong there for the same reason (p_1 … p_6)


@dataclass
class Missing:
    """A claim (or declared input) whose printed number the text no longer contains.

    ``lines`` is where it was expected (first, last): between the numbers of its neighbouring claims, else its
    section; None when its section was not located either. A missing claim fails the audit: a handout that
    does not print a value it is checked for has lost a number (a value the handout leaves to the reader is
    declared with ``in_text=False`` and never looked for)."""

    id: str
    printed: str
    location: Location
    what: str = ""
    kind: str = "claim"
    lines: tuple | None = None
    near: str = ""  # the anchor text of a claim pinned with near=, when no line holds it


@dataclass
class Ambiguous:
    """A claim whose printed number the text holds more than once where it may stand (between the numbers of
    its neighbouring claims): the audit attributed it to the occurrence at ``line`` and lists the others,
    uncovered, at ``others``. Anchor the claim with ``near=`` (the text of its line) to settle it."""

    id: str
    printed: str
    line: int
    others: tuple


# why a statement is wrong whose printed result a claim holds: a factor, exponent, index or name in it is wrong
FALSE_STATEMENT = "the result is right but the statement is false even with every operand read as rounded"


@dataclass
class Disagreement:
    """A number a derivation's claim (or ``section.reported``) speaks of, that the page's own arithmetic finds
    wrong from its printed operands: the claim decides the token, and the disagreement is listed beside it.

    ``claim`` is what the derivation says of the token (its claim or the reason it is reported); ``statement``
    the page's statement that does not hold from its printed operands, ``correct`` what those operands give."""

    line: int
    printed: str
    claim: str
    statement: str
    correct: str


@dataclass
class Counts:
    """Token counts of one text or one derivation's part of it."""

    quantity: int = 0
    structural: int = 0
    reported: int = 0
    covered: int = 0
    uncovered: int = 0
    wrong: int = 0

    @property
    def coverage(self) -> float:
        """Covered quantity tokens over all quantity tokens, in percent (100 when there are none: then
        :meth:`coverage_text` says so, and ``--fail-under`` fails)."""
        return 100.0 * self.covered / self.quantity if self.quantity else 100.0

    def coverage_text(self) -> str:
        """The coverage as the report prints it: ``97.5%``, or ``—`` for a text without quantity tokens."""
        return f"{self.coverage:.1f}%" if self.quantity else "— (no quantity tokens)"

    @property
    def uncovered_share(self) -> float:
        return 100.0 * self.uncovered / self.quantity if self.quantity else 0.0

    def as_dict(self) -> dict:
        return {"quantity": self.quantity, "structural": self.structural, "reported": self.reported,
                "covered": self.covered, "uncovered": self.uncovered, "wrong": self.wrong,
                "coverage_percent": round(self.coverage, 2)}


def count(tokens) -> Counts:
    """The counts of ``tokens``, each attributed (:class:`~symseq.audit.attribution.Attribution`)."""
    c = Counts()
    for t in tokens:
        v = t.attribution.verdict
        if t.attribution.quantity:
            c.quantity += 1
        setattr(c, v, getattr(c, v) + 1)
    return c


@dataclass
class AuditReport:
    """Everything ``symseq audit`` found in one handout (see the module docstring)."""

    path: Path
    derivations: list  # names
    tokens: list
    errata: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    unlocated: list = field(default_factory=list)  # (derivation, section title) without a heading
    spans: dict = field(default_factory=dict)  # derivation name -> [(first line, last line), ...]
    sections: list = field(default_factory=list)  # (derivation, section title, (first, last) or None)
    ambiguous: list = field(default_factory=list)  # Ambiguous
    broken: list = field(default_factory=list)  # (derivation, section title, first line of the error) of sections
    # that did not build
    skipped: list = field(default_factory=list)  # (derivation, section title, why) of sections not checked (a
    # package they need is missing): their numbers count as uncovered
    undecided: list = field(default_factory=list)  # (claim id, first line of the error) of claims whose check
    # raised an error: the text's number for them was not checked
    absent: list = field(default_factory=list)  # names of the derivations of which nothing is in the text
    claims_checked: int = 0
    claims_matched: int = 0
    disagreements: list = field(default_factory=list)  # Disagreement, from add_arithmetic
    quotes: list = field(default_factory=list)  # (line ranges, near, claim id) of each claim anchored by its words
    comparisons: list = field(default_factory=list)  # (symseq.audit.words.Comparison, claim id or None)
    formulas: list = field(default_factory=list)  # (line, equation, holds): the page's formulas a ledger decided
    arithmetic: object = field(default=None, repr=False)  # the page-arithmetic report added, or None
    places: object = field(default=None, repr=False)  # Document.where of a notebook or HTML page, else None

    @property
    def rendered(self) -> bool:
        """Whether the lines are those of a rendered notebook or HTML page, named by :meth:`where`."""
        return self.places is not None

    def where(self, line: int | None) -> str:
        """Where line ``line`` of the audit is, as the author finds it: ``12`` in a text file, ``cell 7, line 3``
        in a notebook, ``HTML line 212`` in a page (:meth:`symseq.read.document.Document.where`); ``—`` for
        None."""
        if line is None:
            return "—"
        return self.places(line) if self.places is not None else str(line)

    def __repr__(self) -> str:
        """One line: the handout, its quantity tokens by class, the coverage and the verdict."""
        c = self.counts
        return (f"AuditReport({Path(self.path).name}: {c.quantity} quantity tokens, {c.covered} covered, "
                f"{c.wrong} wrong, {c.uncovered} uncovered; coverage {c.coverage_text()}; "
                f"{'fails' if self.failures() else 'passes'})")

    @property
    def counts(self) -> Counts:
        return count(self.tokens)

    def counts_for(self, name: str) -> Counts | None:
        """Counts over the lines of one derivation's located sections (None when none was located)."""
        sp = self.spans.get(name)
        if sp is None:
            return None
        return count(t for t in self.tokens if any(a <= t.line <= b for a, b in sp))

    def failures(self, fail_under: float | None = None) -> list[str]:
        """Why the audit fails (empty when it passes): a derivation section that did not build, wrong numbers,
        claims or inputs missing from the text, and, with ``fail_under`` (percent), coverage below it. The one
        verdict the CLI exits on."""
        out = []
        if self.page_only and not self.arithmetic.statements:  # nothing was checked, so nothing may pass
            out.append("no arithmetic statement was found in the text and no derivation has it as its source: "
                       "write a derivation for it (symseq new NAME starts one; then symseq audit FILE --derivation NAME)")
        if self.absent:  # an empty file, or another handout: nothing was checked, so nothing may pass
            out.append(f"no section of {', '.join(self.absent)} found in the text (no heading names one of its "
                       f"sections and none of its claims or inputs is printed): is this the right file?")
        if self.broken:  # their claims were never stated: nothing the text prints for them was checked
            out.append(f"{len(self.broken)} section(s) of the derivation did not build: "
                       + "; ".join(f"{d} · {t}" for d, t, _ in self.broken))
        if self.undecided:  # a claim that cannot be evaluated decides nothing: the number it covers is unchecked
            out.append(f"{len(self.undecided)} claim(s) could not be checked: "
                       + "; ".join(f"{c} ({err})" for c, err in self.undecided))
        numbers = [e for e in self.errata if e.kind != "statement"]
        if numbers:
            wrong = self.counts.wrong
            out.append(f"{len(numbers)} wrong number(s)" + (f" ({wrong} wrong tokens)" if wrong > len(numbers)
                                                            else ""))
        statements = len(self.errata) - len(numbers)
        if statements:  # a false formula or statement of the page: no single number of it is wrong
            out.append(f"{statements} false statement(s) or formula(s)")
        claims = sum(m.kind == "claim" for m in self.missing)
        inputs = len(self.missing) - claims
        if claims:
            out.append(f"{claims} claim(s) missing from the text")
        if inputs:
            out.append(f"{inputs} input(s) missing from the text")
        if fail_under is not None and not self.counts.quantity:
            out.append(f"the text has no quantity tokens, so there is no coverage to hold to --fail-under "
                       f"{fail_under:g}")
        elif fail_under is not None and self.counts.coverage < fail_under:
            out.append(f"coverage {self.counts.coverage:.1f}% is below --fail-under {fail_under:g}")
        return out

    @property
    def failed(self) -> bool:
        """Some number is wrong, or a claim's or input's number is missing from the text."""
        return bool(self.failures())

    @property
    def ok(self) -> bool:
        """No number is wrong and none is missing."""
        return not self.failed

    def uncovered(self) -> list:
        """The uncovered quantity tokens, in the text's order."""
        return [t for t in self.tokens if t.attribution.verdict == "uncovered"]

    @property
    def page_only(self) -> bool:
        """Whether only the page's own arithmetic accounts for the tokens (no derivation: :meth:`of_page`)."""
        return not self.derivations and self.arithmetic is not None

    @classmethod
    def of_page(cls, arith, *, places=None) -> AuditReport:
        """The audit of a page no derivation speaks of: its tokens as its own arithmetic attributes them.

        Args:
            arith: the :class:`~symseq.audit.arithmetic.PageArithmetic` of the page (its tokens become the report's).
            places: :meth:`symseq.read.document.Document.where` of a notebook or HTML page, else None.

        Returns:
            an :class:`AuditReport` with no derivations: one :class:`Erratum` of kind ``"arithmetic"`` per wrong token
            (and one per wrong statement none of whose numbers is a quantity token), and one per statement that
            cannot hold.
        """
        from .matching import digit_fault

        rep = cls(Path(arith.path), [], arith.tokens, places=places)
        rep.arithmetic = arith
        blamed = set()
        for t in arith.tokens:
            if t.attribution.verdict == "wrong":
                rep.errata.append(_arithmetic_erratum(t, arith, digit_fault))
                blamed.add((t.attribution.by.line, t.attribution.by.text))
        rep.errata += [_statement_erratum(st) for st in arith.errata if (st.line, st.text) not in blamed]
        rep.add_statements(arith.cannot_hold, "page arithmetic")
        return rep

    def add_arithmetic(self, arith) -> AuditReport:
        """Count the page's own arithmetic (:func:`symseq.audit.arithmetic.audit_arithmetic`, run on its own
        reading of the same text) in this audit, one verdict per token; returns ``self``.

        * A token no derivation speaks of (``uncovered``, or ``structural`` by default: an index the page computes
          with) takes the arithmetic's verdict where a statement decides it: ``covered`` when the statement holds
          from its printed operands, ``wrong`` (an :class:`Erratum` of kind ``"arithmetic"``, classified by
          :mod:`symseq.audit.causes` like every other) when it does not. A result that differs from its printed
          operands only within their rounding stays ``uncovered``: only a derivation's true values decide it.
        * A token a derivation speaks of (``covered``, ``wrong`` or ``reported``) keeps the derivation's verdict:
          the claim decides, since it holds the true value. Where the page's arithmetic finds that token wrong
          and the claim does not (``covered`` or ``reported``), the two disagree: a :class:`Disagreement` is listed
          (``disagreements``), never dropped, so the author sees that the printed statement does not follow
          from its own printed operands although the number is right.

        Args:
            arith: the :class:`~symseq.audit.arithmetic.PageArithmetic` of the same text, read separately (its
                tokens are its own objects, at the same lines and columns as ``self.tokens``).

        Source: issue 13, "no code for the easy part".
        """
        from .matching import digit_fault

        self.arithmetic = arith
        theirs = {(t.line, t.start): t for t in arith.tokens}
        for t in self.tokens:
            a = theirs.get((t.line, t.start))
            if a is None or a.attribution.verdict not in ("covered", "wrong") or a.text != t.text:
                continue
            mine, page = t.attribution.verdict, a.attribution.verdict
            if mine in ("uncovered", "structural"):
                t.attribution = a.attribution
                if page == "wrong":
                    self.errata.append(_arithmetic_erratum(a, arith, digit_fault))
            elif page == "wrong" and mine in ("covered", "reported"):
                e = _arithmetic_erratum(a, arith, digit_fault)
                repaired = _repaired(a, arith)
                if repaired is not None and _wrong_however_rounded(repaired):
                    # an operand of a statement that fails however its decimals are rounded, and holds with this
                    # token changed (1×0+2×0.141=0.141 with 1 for the 2): the statement is false where it stands,
                    # whatever claim took the token (the d_k = 2 of the section, matched to the wrong 2)
                    t.attribution = a.attribution
                    self.errata.append(e)
                    continue
                st, _ = _failing_link(a, arith)
                inside = [u for u in self.tokens if st is not None and any(
                    u.line == ln and a0 <= u.start < b0 for ln, a0, b0 in st.spans)]
                # the claim holds the printed result, yet the statement fails with every printed operand read as
                # rounded: a number among its operands is wrong (1.88 / 4.56 = 0.39 for 1.78 / 4.56), unless a
                # claim already names it (sin −3 for sin 3)
                if inside and not any(u.attribution.verdict == "wrong" for u in inside) \
                        and _wrong_however_rounded(st):
                    self.errata.append(Erratum(
                        st.line, st.text, "—", f"{FALSE_STATEMENT}: its printed operands give {e.correct}, the "
                        f"claim holds {t.text}", e.source, "", t.context, kind="statement"))
                    for u in inside:  # its operands no claim holds: one of them is the wrong number
                        if u is not t and u.attribution.verdict == "covered" and u.attribution.statement is not None:
                            u.attribution = u.attribution.but("wrong")
                    continue
                self.disagreements.append(Disagreement(t.line, t.text, t.attribution.text(), e.source, e.correct))
        self.add_statements(arith.cannot_hold, "page arithmetic")
        return self

    def add_ledger_values(self, held: list) -> AuditReport:
        """Count as covered each uncovered number that prints the value of a name bound to a derivation's ledger
        row and found to hold there (:func:`symseq.audit.bound.check`'s ``held``: ``S_{60}\\approx0.388``, the
        0.388); returns ``self``."""
        from ..read.number import SIGNED_NUMBER
        from .attribution import Attribution, LedgerValue

        by_line: dict = {}
        for t in self.tokens:
            by_line.setdefault(t.line, []).append(t)
        for line, a, b, printed, chain, ledger in held:
            want = tuple(m.group(0).replace("−", "-") for m in SIGNED_NUMBER.finditer(printed))  # as Token.entries
            for t in by_line.get(line, []):
                if a <= t.start < b and t.attribution is not None and t.attribution.verdict == "uncovered" \
                        and t.entries == want:
                    t.attribution = Attribution("covered", LedgerValue(line, chain, ledger))
        return self

    def add_repeats(self, lines: list[str], *, reach: int = REPEAT_REACH) -> AuditReport:
        """Check a line the page prints again: a line at most ``reach`` lines below another, with the same words and
        the same numbers but one, where that number of the earlier line is an input or a claim's value and the
        copy's is not accounted for, prints a second, false value of that quantity: an :class:`Erratum` at the
        copy, whose correct value is the earlier line's (``0.8[2,0]+0.1[0,2]+0.1[4,4]=[2,0.6]`` printed again as
        ``0.9[2,0]…``). The earlier number may also be one the page's own arithmetic holds where the copy's is left
        within rounding: the same computation printed twice with two results. A line with few words (fewer than
        :data:`REPEAT_WORDS` letters outside its numbers: a labelled row of a table) is compared only with the line
        just above it (the same row printed twice); a line of numbers alone is never compared (rows of a matrix
        differ by a number as a matter of course). Returns ``self``.

        Source: issue 39, "every printing of a bound quantity's value is checked".
        """
        from .attribution import Given, PageStatement
        from .matching import digit_fault

        by_line: dict = {}
        for t in self.tokens:
            by_line.setdefault(t.line, []).append(t)
        seen: dict = {}  # a line's words (its text without its numbers) → (the last line printing them, its tokens)
        before = len(self.errata)
        # a line where a claim expected its number but did not find it holds that claim's own quantity: the claim
        # missing there says so, not the same words printed earlier of another quantity
        expected = {n for x in self.missing if x.lines for n in range(x.lines[0], x.lines[1] + 1)}
        for line in sorted(by_line):
            toks = sorted(by_line[line], key=lambda t: t.start)
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            words, pos = [], 0
            for t in toks:
                words.append(" ".join(text[pos:t.start].split()))
                pos = t.end
            words.append(" ".join(text[pos:].split()))
            letters = sum(ch.isalpha() for w in words for ch in w)
            if not letters:
                continue
            first, first_toks = seen.get(tuple(words), (None, ()))
            seen[tuple(words)] = line, toks
            if first is None or line - first > (reach if letters >= REPEAT_WORDS else 1) or line in expected:
                continue
            differ = [(a, b) for a, b in zip(first_toks, toks) if a.key != b.key]
            if len(differ) != 1:
                continue
            a, b = differ[0]
            by, claim = a.attribution.by, a.attribution.claim
            # the copy's number accounted for by nothing, or only by its own line's arithmetic (1×0.283+1×0.284=0.566
            # holds to the printed digits; it does not make 0.284 the value of the quantity printed as 0.283 above)
            copy_free = b.attribution.verdict == "uncovered" or \
                b.attribution.verdict == "covered" and isinstance(b.attribution.by, PageStatement)
            # the earlier line's number held by its own arithmetic alone (the same computation, printed again with
            # another result the arithmetic leaves within rounding): the copy's number is the second value
            arith = claim is None and isinstance(by, PageStatement) and b.attribution.verdict == "uncovered"
            if a.attribution.verdict != "covered" or not copy_free or \
                    claim is None and not isinstance(by, Given) and not arith:
                continue
            b.attribution = a.attribution.but("wrong")
            source = claim.id if claim is not None else f"page arithmetic, line {by.line}" if arith else by.source
            self.errata.append(Erratum(line, b.text, a.text, digit_fault(b.text, a.text), source, context=b.context,
                                       kind="claim" if claim is not None else "arithmetic" if arith else "input"))
        if len(self.errata) > before:
            self._in_text_order()
        return self

    def _in_text_order(self) -> None:
        """Put the errata in the text's order (those with no line last)."""
        self.errata.sort(key=lambda e: (e.line is None, e.line or 0))

    def add_statements(self, broken: list, source: str) -> AuditReport:
        """Add an erratum of kind ``"statement"`` for each :class:`~symseq.audit.arithmetic.Broken` of ``broken``
        (a statement of the page that is false or cannot hold: one that lost a number, prints one for a value that
        is not real, or an equation the derivation's ledger finds false), its source ``"{source}, line N"``, then
        put the errata in the text's order. Returns ``self``."""
        for g in broken:
            self.errata.append(Erratum(g.line, g.text, g.correct, g.reason, f"{source}, line {g.line}", "", g.text,
                                       kind="statement"))
        self._in_text_order()
        return self

    def place_missing(self, derivations: list) -> AuditReport:
        """Name the wrong number where a claim is missing: when a claim's printed value is missing from the text
        and the lines where it was expected hold exactly one quantity token of its kind and shape that nothing
        accounts for and that reads as the value with one slip (two entries swapped, or a decimal with at most two
        characters edited: :func:`_near_copy`), that token is the claim's number printed wrongly (``[0.4,0.8]`` for
        ``[0.8,0.4]``, ``0.0023`` for ``0.0923``): an :class:`Erratum` at its line, printed against the claim's
        value, instead of "claim missing". Returns ``self``.

        Source: issue 39, "a wrong number the audit can place is reported as wrong, printed against correct, at
        its line"."""
        from ..errors import SymseqError
        from .attribution import Attribution
        from .structure import claim_tokens

        kept = []
        for x in self.missing:
            try:
                want = claim_tokens(x.printed) if x.kind == "claim" and x.lines else []
            except SymseqError:
                want = []
            if len(want) != 1:
                kept.append(x)
                continue
            w = want[0]
            free = [t for t in self.tokens if x.lines[0] <= t.line <= x.lines[1] and t.attribution.verdict == "uncovered"
                    and t.shape == w.shape and (t.kind == w.kind or not w.shape) and _near_copy(t, w)]
            if len(free) != 1:
                kept.append(x)
                continue
            t = free[0]
            claim = next((c for d in derivations for c in d.claims if c.id == x.id), None)
            t.attribution = Attribution("wrong", claim, "printed where the claim expects its value")
            self.errata.append(Erratum(t.line, t.text, x.printed, "printed where the claim expects its value "
                                       f"{x.printed}", x.id, "", t.context))
        self.missing = kept
        self._in_text_order()
        return self

    def add_comparisons(self, doc) -> AuditReport:
        """List the page's comparison words in its statements (:func:`symseq.audit.words.comparisons`), each with
        the claim that checks it: one whose ``near=`` quotes the word on that line, so that the audit fails when
        the word is changed; None for a statement no claim checks. Questions and quoted words are left out.
        Returns ``self``."""
        from .words import comparisons, synonym_quotes

        def quotes_it(near: str, c) -> bool:  # near's words (or a synonym's), in order on the line, span the word
            for said in (near, *synonym_quotes(near)):
                words = re.findall(r"[A-Za-z]+", said)
                pattern = r"(?<![A-Za-z])" + r"[^A-Za-z]{1,40}?".join(map(re.escape, words)) + r"(?![A-Za-z])"
                if words and any(m.start() <= c.start and c.end <= m.end()
                                 for m in re.finditer(pattern, doc.line(c.line), re.IGNORECASE)):
                    return True
            return False

        for c in comparisons(doc):
            if c.use != "statement":
                continue
            by = next((cid for ranges, near, cid in self.quotes
                       if any(a <= c.line <= b for a, b in ranges) and quotes_it(near, c)), None)
            self.comparisons.append((c, by))
        return self

    @property
    def unchecked_comparisons(self) -> list:
        """The comparisons in words no claim checks (:meth:`add_comparisons`)."""
        return [c for c, by in self.comparisons if by is None]

    def boundary_notes(self) -> list[tuple[int, str, str]]:
        """(line, claim id, note) of each printed decimal a claim holds but whose value lies within 1% of a unit of
        its last digit from a rounding boundary (:data:`symseq.verify.claims.FRAGILE_UNITS`): right, but another
        order of operations may print the other digit. One per claim, at the first line that prints it; notes,
        never failures (``symseq verify`` prints the same ones)."""
        out, seen = [], set()
        for t in self.tokens:
            c = t.attribution.claim
            if c is None or id(c) in seen or c.result is None or t.attribution.verdict != "covered":
                continue
            seen.add(id(c))
            out += [(t.line, c.id, note) for note in c.result.fragile]
        return out

    def structural_reasons(self) -> dict:
        out: dict[str, int] = {}
        for t in self.tokens:
            if t.attribution.verdict in ("structural", "reported"):
                key = f"{t.attribution.verdict}: {t.attribution.text()}"
                out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def as_json(self, causes=()) -> dict:
        """The JSON document of ``symseq audit --json`` (schema ``symseq-audit/2``, mode ``derivations``, or
        ``arithmetic`` for a page no derivation speaks of, which also lists its ``statements`` and the ``unread``
        ones; the file ``symseq/schema/audit-2.schema.json``; version 2 adds ``skipped_sections``, the sections not
        checked and why, and ``formulas``, the page's equations a ledger decided): summary, per-derivation counts,
        errata, missing claims, every token (its entries and shape), and ``causes``, the errata by cause
        (:func:`symseq.audit.causes.classify`: kind, reason, the line of the upstream number or null, the chain).
        Lines are the audit's (an int, or null where the schema says so); for a notebook or HTML page each token,
        erratum and ambiguity also has ``where`` (its :meth:`where`), and each missing claim ``where_expected``."""
        out = self._json()
        out["causes"] = [{"line": c.erratum.line, "printed": c.erratum.printed, "kind": c.kind, "reason": c.reason,
                          "source_line": getattr(c.source, "line", None),
                          "chain": [{"line": x.line, "printed": x.printed} for x in c.chain]} for c in causes]
        if self.rendered:
            for rec, t in zip(out["tokens"], self.tokens):
                rec["where"] = self.where(t.line)
            for rec in out["errata"] + out["ambiguous"]:
                rec["where"] = self.where(rec["line"])
            for rec in out["missing"]:
                rec["where_expected"] = [self.where(k) for k in rec["lines"]] if rec["lines"] else None
        return out

    def _json(self) -> dict:
        out = {
            "schema": SCHEMA,
            "mode": "arithmetic" if self.page_only else "derivations",
            "file": str(self.path),
            "derivations": list(self.derivations),
            "summary": self.counts.as_dict(),
            "failed": self.failed,
            "by_derivation": {n: (dict(c.as_dict(), lines=[list(r) for r in self.spans[n]])
                                  if (c := self.counts_for(n)) else None) for n in self.derivations},
            "errata": [dict(vars(e), also=list(e.also)) for e in self.errata],
            "missing": [dict(vars(m), location=str(m.location), lines=list(m.lines) if m.lines else None)
                        for m in self.missing],
            "unlocated_sections": [{"derivation": d, "section": s} for d, s in self.unlocated],
            "sections": [{"derivation": d, "section": s, "lines": list(r) if r else None}
                         for d, s, r in self.sections],
            "ambiguous": [dict(vars(a), others=list(a.others)) for a in self.ambiguous],
            "broken_sections": [{"derivation": d, "section": s, "error": e} for d, s, e in self.broken],
            "skipped_sections": [{"derivation": d, "section": s, "reason": why} for d, s, why in self.skipped],
            "undecided_claims": [{"claim": c, "error": e} for c, e in self.undecided],
            "absent_derivations": list(self.absent),
            "disagreements": [vars(d) for d in self.disagreements],
            "comparisons": [{"line": c.line, "column": c.start + 1, "word": c.word, "context": c.context, "checked_by": by}
                            for c, by in self.comparisons],
            "boundary_notes": [{"line": line, "claim": c, "note": note} for line, c, note in self.boundary_notes()],
            "formulas": [{"line": line, "formula": text, "holds": holds} for line, text, holds in self.formulas],
            "tokens": [{
                "line": t.line, "column": t.start + 1, "text": t.text, "kind": t.kind, "entries": list(t.entries),
                "shape": list(t.shape), "class": t.attribution.verdict, "reason": t.attribution.text(),
                "context": t.context,
            } for t in self.tokens],
        }
        if self.page_only:  # what the page's own arithmetic decided, statement by statement
            out["statements"] = [{
                "line": s.line, "first": s.first, "text": s.text, "status": s.status,
                "links": [{"left": k.left, "relation": k.relation, "right": k.right, "kind": k.kind, "ok": k.ok,
                           "printed": k.printed, "correct": k.correct, "values": k.values,
                           "within_rounding": k.within_rounding, "message": k.message} for k in s.links],
            } for s in self.arithmetic.statements]
            out["unread"] = [{"line": a, "text": b, "reason": c} for a, b, c in self.arithmetic.unread]
        return out


def _entry_fault(printed: str, correct: str, digit_fault) -> str:
    """The digit at fault of a printed number, or of the first entry that differs of a printed list
    (``[1, 0, 1]`` for ``[1, 0, 0]``: "entry [2]: the units digit: printed 1, correct 0")."""
    from ..errors import SymseqError
    from ..verify.claims import entry_label
    from ..read import read_printed

    try:
        a, b = read_printed(printed), read_printed(correct)
    except SymseqError:
        return digit_fault(printed, correct)
    if a.kind in ("vector", "matrix") and a.shape == b.shape:
        k = next((k for k, (x, y) in enumerate(zip(a.entries, b.entries)) if x.text != y.text), None)
        if k is not None:
            return f"{entry_label(k, a.shape)}: {digit_fault(a.entries[k].text, b.entries[k].text)}"
    return digit_fault(printed, correct)


def _failing_link(token, arith):
    """(statement, link) of the page-arithmetic report ``arith`` whose failing link prints ``token`` as its result,
    or (None, None)."""
    for st in arith.statements:
        for link in st.wrong:
            if link.index + 1 < len(st.spans):
                line, a, b = st.spans[link.index + 1]
                if line == token.line and a <= token.start < b:
                    return st, link
    return None, None


def _repaired(token, arith):
    """The statement of the page-arithmetic report ``arith`` that holds with ``token``, one of its operands, printed
    otherwise (:attr:`~symseq.audit.arithmetic.Checked.repair`), or None."""
    for st in arith.statements:
        if st.repair is not None and st.status == "wrong" and (st.repair.line, st.repair.start) == \
                (token.line, token.start):
            return st
    return None


def _near_copy(t, w) -> bool:
    """Whether token ``t`` looks like the value ``w`` printed with one slip: the same entries in another order (two
    swapped), or at most two characters edited (a digit, a sign, a decimal point)."""
    from .matching import _levenshtein

    if t.entries == w.entries:  # the value itself, printed where the claim was not placed: not a slip
        return False
    if sorted(t.entries) == sorted(w.entries):
        return True
    return _levenshtein(",".join(t.entries), ",".join(w.entries)) <= 2 and any("." in e for e in w.entries)


def _wrong_however_rounded(st) -> bool:
    """Whether statement ``st`` (a :class:`~symseq.audit.arithmetic.Checked`) fails even with every printed decimal
    operand read as rounded (:func:`~symseq.verify.steps.decide` with ``rounded=None``), its names read with the
    values the page bound to them (``3D^3 = 192`` with ``D = 8`` printed above); False when it cannot be decided."""
    from ..errors import SymseqError
    from ..verify.steps import decide

    try:
        links = decide(st.statement if st.statement is not None else st.text)
    except SymseqError:
        return False
    return any(not link.ok and not (link.kind == "result" and link.within_rounding) for link in links)


def _arithmetic_erratum(token, arith, digit_fault) -> Erratum:
    """The :class:`Erratum` of a token that the page-arithmetic report ``arith`` found wrong: the failing link of
    the statement whose result part holds it, with the correct rounding of each printed entry."""
    st = _repaired(token, arith)  # an operand found wrong (Checked.repair): printed, and what makes it hold
    if st is not None:
        printed, correct = st.repair.printed, st.repair.correct
        return Erratum(token.line, printed, correct, _entry_fault(printed, correct, digit_fault) + " (the statement "
                       "holds with it, and the page printed it before)", f"page arithmetic, line {st.line}: {st.text}",
                       "", token.context, kind="arithmetic")
    st, link = _failing_link(token, arith)
    if st is not None:
        source = f"page arithmetic, line {st.line}: {st.text}"
        link = link.inner or link  # a rewrite wrong at a number printed inside it: that inner step's result
        if link.kind != "result" or not link.correct:
            return Erratum(token.line, token.text, "—", link.message or "the rewrite does not hold", source,
                           ", ".join(link.values), token.context, kind="arithmetic")
        mine = [i for i in link.wrong if link.printed[i] in token.entries] or link.wrong
        printed = ", ".join(link.printed[i] for i in mine)
        correct = ", ".join(link.correct[i] for i in mine)
        fault = _entry_fault(link.printed[mine[0]], link.correct[mine[0]], digit_fault)
        return Erratum(token.line, printed, correct, fault, source, ", ".join(link.values[i] for i in mine),
                       token.context, kind="arithmetic")
    return Erratum(token.line, token.text, "—", "wrong from its printed operands", token.attribution.text(),
                   context=token.context, kind="arithmetic")


def _statement_erratum(st) -> Erratum:
    """The :class:`Erratum` of a statement wrong from its printed operands none of whose numbers is a quantity
    token (a page with no derivation still fails on it): its first failing link."""
    from .matching import digit_fault

    link = st.wrong[0]
    link = link.inner or link
    source = f"page arithmetic, line {st.line}: {st.text}"
    if link.kind != "result" or not link.correct:
        return Erratum(st.line, st.text, "—", link.message or "the rewrite does not hold", source,
                       ", ".join(link.values), st.text, kind="arithmetic")
    printed = ", ".join(link.printed[i] for i in link.wrong)
    correct = ", ".join(link.correct[i] for i in link.wrong)
    return Erratum(st.line, printed, correct, _entry_fault(link.printed[link.wrong[0]], link.correct[link.wrong[0]],
                                                           digit_fault),
                   source, ", ".join(link.values[i] for i in link.wrong), st.text, kind="arithmetic")
