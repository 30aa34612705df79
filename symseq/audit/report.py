"""The result of an audit: every token's classification, the errata, the missing claims, and coverage.

Classes of a token (``Token.cls``):

* ``covered``: a claim of a derivation prints it and holds, or it is an
  input the derivation declares (``section.given``) with the same value;
* ``wrong``: a claim prints it and does not hold, or it is a claim's or an
  input's number as edited in the text (an erratum, with the correct value);
* ``uncovered``: a quantity no derivation checks;
* ``structural``: not a quantity (section numbers, years, indices …), with its reason;
* ``reported``: declared by a derivation as not derivable (``section.reported``), with its reason.

Coverage is covered quantity tokens over all quantity tokens (covered, wrong
and uncovered); structural and reported tokens are not in the denominator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CLASSES = ("covered", "wrong", "uncovered", "structural", "reported")


@dataclass
class Erratum:
    """A number the handout prints wrongly: where, as printed, the correct value and the digit at fault."""

    line: int
    printed: str
    correct: str
    fault: str
    source: str  # the claim id, or the input's location
    value: str = ""  # the exact or 12-digit value
    context: str = ""
    kind: str = "claim"  # claim or input


@dataclass
class Missing:
    """A claim (or declared input) whose printed number the text no longer contains."""

    id: str
    printed: str
    location: str
    what: str = ""
    kind: str = "claim"


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
        """Covered quantity tokens over all quantity tokens, in percent (100 when there are none)."""
        return 100.0 * self.covered / self.quantity if self.quantity else 100.0

    @property
    def uncovered_share(self) -> float:
        return 100.0 * self.uncovered / self.quantity if self.quantity else 0.0

    def as_dict(self) -> dict:
        return {"quantity": self.quantity, "structural": self.structural, "reported": self.reported,
                "covered": self.covered, "uncovered": self.uncovered, "wrong": self.wrong,
                "coverage_percent": round(self.coverage, 2)}


def count(tokens) -> Counts:
    c = Counts()
    for t in tokens:
        if t.cls in ("covered", "wrong", "uncovered"):
            c.quantity += 1
        setattr(c, t.cls, getattr(c, t.cls) + 1)
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
    claims_checked: int = 0
    claims_matched: int = 0

    @property
    def counts(self) -> Counts:
        return count(self.tokens)

    def counts_for(self, name: str) -> Counts | None:
        """Counts over the lines of one derivation's located sections (None when none was located)."""
        sp = self.spans.get(name)
        if sp is None:
            return None
        return count(t for t in self.tokens if any(a <= t.line <= b for a, b in sp))

    @property
    def ok(self) -> bool:
        """No number is wrong."""
        return not self.errata

    def uncovered(self) -> list:
        return [t for t in self.tokens if t.cls == "uncovered"]

    def structural_reasons(self) -> dict:
        out: dict[str, int] = {}
        for t in self.tokens:
            if t.cls in ("structural", "reported"):
                key = f"{t.cls}: {t.reason}"
                out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def as_json(self) -> dict:
        """A JSON-ready record: summary, per-derivation counts, errata, missing claims and every token."""
        return {
            "file": str(self.path),
            "derivations": list(self.derivations),
            "summary": self.counts.as_dict(),
            "by_derivation": {n: (dict(c.as_dict(), lines=[list(r) for r in self.spans[n]])
                                  if (c := self.counts_for(n)) else None) for n in self.derivations},
            "errata": [vars(e) for e in self.errata],
            "missing": [vars(m) for m in self.missing],
            "unlocated_sections": [{"derivation": d, "section": s} for d, s in self.unlocated],
            "tokens": [{
                "line": t.line, "column": t.start + 1, "text": t.text, "kind": t.kind, "entries": list(t.entries),
                "class": t.cls, "reason": t.reason, "context": t.context,
            } for t in self.tokens],
        }
