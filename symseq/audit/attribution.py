"""What accounts for a token of an audit: its verdict and the claim, input, page statement or rule behind it.

Every token of an audited page gets one :class:`Attribution` (``Token.attribution``):

* ``verdict``: ``covered``, ``wrong``, ``uncovered``, ``structural`` or ``reported`` (:data:`VERDICTS`);
* ``by``: what decided it, a typed record and never text: a derivation's claim (a
  :class:`symseq.verify.claims.Claim`), an input a derivation declares (:class:`Given`), a number a derivation
  declares as not derivable (:class:`Reported`), a statement of the page's own arithmetic (:class:`PageStatement`), a
  printed value of a name bound to a ledger row (:class:`LedgerValue`),
  the rule that makes a number structural (:class:`Rule`), a section that was not checked (:class:`Unchecked`),
  or None (an uncovered number nothing speaks of);
* ``detail``: what the verdict adds to ``by``: a claim's status and message when the claim could not decide the
  token, or :data:`WITHIN_ROUNDING` for a result the page's arithmetic leaves to a derivation.

The text the reports show for a token is :meth:`Attribution.text`, rendered here and nowhere else; code decides on
the fields, never on that text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

VERDICTS = ("covered", "wrong", "uncovered", "structural", "reported")
QUANTITY = ("covered", "wrong", "uncovered")  # the verdicts of a quantity token (the denominator of coverage)
WITHIN_ROUNDING = "within the rounding of its operands"


@dataclass(frozen=True)
class Given:
    """An input a derivation declares (``section.given``): the derivation's name, the input's location
    (:class:`symseq.verify.claims.Location`) and what it is."""

    derivation: str
    location: object
    what: str = ""

    @property
    def section(self) -> str:
        """The title of the section that declares it."""
        return self.location.section

    @property
    def source(self) -> str:
        """The input as errata and missing inputs name it: ``derivation::location[::what]``."""
        return f"{self.derivation}::{self.location}" + (f"::{self.what}" if self.what else "")


@dataclass(frozen=True)
class Reported:
    """A number a derivation declares as not derivable (``section.reported``): the reason it gives, the
    derivation's name and the location of the declaration."""

    reason: str
    derivation: str
    location: str


@dataclass(frozen=True)
class PageStatement:
    """A statement of the page's own arithmetic (:class:`symseq.audit.arithmetic.Checked`): the line of its result
    and its text; for the operand a wrong statement is put down to, the value with which it holds (``correct``)
    and the operand as printed (``printed``)."""

    line: int
    text: str
    correct: str = ""
    printed: str = ""


@dataclass(frozen=True)
class LedgerValue:
    """A value the page prints for a name the audit bound to a derivation's ledger row (:mod:`symseq.audit.bound`),
    found to hold there: the line, the printed chain (``S_{60} ≈ 0.388``) and the ledger's title."""

    line: int
    text: str
    ledger: str


@dataclass(frozen=True)
class Rule:
    """The rule that makes a number structural (:mod:`symseq.audit.structure`): ``name`` as the reports give it
    ("heading", "code", "subscript", ...)."""

    name: str


@dataclass(frozen=True)
class Unchecked:
    """A derivation section that was not checked, over whose lines a number stands: ``derivation``, ``section`` and
    why (the reason it was skipped, or the first line of its error)."""

    derivation: str
    section: str
    why: str


@dataclass(frozen=True)
class Attribution:
    """The verdict on one token and what accounts for it (see the module docstring).

    Attributes:
        verdict: one of :data:`VERDICTS`.
        by: a claim, :class:`Given`, :class:`Reported`, :class:`PageStatement`, :class:`Rule`, :class:`Unchecked`
            or None.
        detail: for a claim that could not decide the token, its status and message (``"error: ..."``); for a
            result the page's arithmetic leaves to a derivation, :data:`WITHIN_ROUNDING`; else "".
    """

    verdict: str
    by: object = None
    detail: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")

    @property
    def quantity(self) -> bool:
        """Whether the token is a quantity (covered, wrong or uncovered)."""
        return self.verdict in QUANTITY

    @property
    def claim(self):
        """The claim that decided the token, or None (an input, a statement, a rule ...)."""
        return self.by if _is_claim(self.by) else None

    @property
    def claim_id(self) -> str | None:
        """The id of :attr:`claim`, or None."""
        c = self.claim
        return None if c is None else c.id

    @property
    def section(self) -> tuple[str, str] | None:
        """(derivation, section title) of the claim or input that decided the token, else None."""
        if isinstance(self.by, Given):
            return self.by.derivation, self.by.section
        c = self.claim
        return None if c is None else (c.derivation, getattr(c.location, "section", str(c.location)))

    @property
    def what(self) -> str:
        """What the claim or input that decided the token says it is (its ``what=``), else ""."""
        if isinstance(self.by, Given):
            return self.by.what
        c = self.claim
        return "" if c is None else c.what

    @property
    def statement(self) -> PageStatement | None:
        """The page statement that decided the token, or None."""
        return self.by if isinstance(self.by, PageStatement) else None

    @property
    def rule(self) -> str:
        """The name of the structural rule, or ""."""
        return self.by.name if isinstance(self.by, Rule) else ""

    def but(self, verdict: str) -> Attribution:
        """The same attribution with another verdict."""
        return replace(self, verdict=verdict)

    def text(self) -> str:
        """The attribution as the reports show it (the JSON ``reason`` of a token, the note of an uncovered one, the
        key of the counts of structural and reported numbers)."""
        by = self.by
        if isinstance(by, PageStatement):
            if self.detail:
                return self.detail
            held = f" holds with {by.correct} for {by.printed}" if by.correct else ""
            return f"page arithmetic, line {by.line}: {by.text}{held}"
        if isinstance(by, Given):
            return f"input {by.source}"
        if isinstance(by, LedgerValue):
            return f"the derivation's ledger {by.ledger!r}, line {by.line}: {by.text}"
        if isinstance(by, Reported):
            return f"{by.reason} ({by.derivation}, {by.location})"
        if isinstance(by, Rule):
            return by.name
        if isinstance(by, Unchecked):
            return f"{by.derivation} · {by.section} was not checked: {by.why}"
        if _is_claim(by):
            return f"claim {by.id} {self.detail}" if self.detail else by.id
        return self.detail

    def __str__(self) -> str:
        return self.text()


def _is_claim(x) -> bool:
    from ..verify.claims import Claim

    return isinstance(x, Claim)


def verdict_of(token) -> str:
    """The verdict on ``token``, or "" before the audit attributed it."""
    a = token.attribution
    return a.verdict if a is not None else ""
