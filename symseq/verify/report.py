"""The verification report: every claim of some derivations decided once, with the verdict.

:func:`verify` builds the derivations' sections, decides each claim at one
working precision (its values computed by the derivation's
:class:`~symseq.values.Values`, its rounding by :mod:`symseq.numbers`), and
returns a :class:`Report`. The report is the one place the verdict is decided
(:attr:`Report.ok`, the exit status of ``symseq verify``) and the JSON records
are made (:meth:`Report.as_json`); the terminal and LaTeX renderers only
render it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from .claims import STATUSES, Claim

SCHEMA = "symseq-verify/1"  # the name and version of the JSON document :meth:`Report.as_json` makes

# progress(stage, done, total, name): stage is "building" (derivations) or "checking" (claims)
Progress = Callable[[str, int, int, str], None]


@dataclass
class Report:
    """The outcome of checking the claims of ``derivations`` at ``dps`` digits.

    Attributes:
        derivations: the derivations, in order.
        claims: every claim of their sections, in order, each decided (``claim.result``).
        dps: the working precision in decimal digits.
    """

    derivations: list
    claims: list = field(default_factory=list)
    dps: int = 50

    def __repr__(self) -> str:
        """One line: how many derivations and claims, the claims per status, and the verdict."""
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        return (f"Report({len(self.derivations)} derivation(s), {len(self.claims)} claims"
                + (f": {counts}" if counts else "") + f"; {'holds' if self.ok else 'fails'})")

    @property
    def counts(self) -> dict:
        """Claims per status ("ok", "mismatch", "error", "skipped"), every status present."""
        c = Counter(claim.result.status for claim in self.claims)
        return {k: c.get(k, 0) for k in STATUSES}

    @property
    def broken(self) -> list:
        """(derivation, section) for each section that failed to build."""
        return [(d, s) for d in self.derivations for s in d.sections if s.error]

    @property
    def skipped(self) -> list:
        """(derivation, section) for each section not checked (a package it needs is missing)."""
        return [(d, s) for d in self.derivations for s in d.sections if s.skipped]

    @property
    def failures(self) -> list[Claim]:
        """The claims that do not hold (mismatch) or could not be checked (error), in order."""
        return [c for c in self.claims if c.result.status in ("mismatch", "error")]

    @property
    def fragile(self) -> list[tuple[Claim, str]]:
        """(claim, note) for each printed decimal that holds but lies within 1% of a unit of its last digit from a
        rounding boundary (:data:`~symseq.verify.claims.FRAGILE_UNITS`): reported, not failed."""
        return [(c, note) for c in self.claims for note in c.result.fragile]

    @property
    def ok(self) -> bool:
        """The verdict: no claim fails and every section builds (skipped claims and sections do not fail)."""
        return not self.failures and not self.broken

    def as_json(self) -> dict:
        """The JSON document of ``symseq verify --json`` (schema ``symseq-verify/1``, the file
        ``symseq/schema/verify-1.schema.json``): the verdict, the working precision, the claims per status, one
        record per claim (:meth:`Claim.record`, the same fields and types for every claim) and one per section
        that failed to build (derivation, source, section, the first line of its error)."""
        return {
            "schema": SCHEMA,
            "ok": self.ok,
            "dps": self.dps,
            "counts": self.counts,
            "claims": [c.record() for c in self.claims],
            "broken_sections": [{"derivation": d.name, "source": d.source, "section": s.title,
                                 "message": s.error.splitlines()[0]} for d, s in self.broken],
        }


def verify(derivations, dps: int = 50, *, progress: Progress | None = None, sections=None) -> Report:
    """Build ``derivations`` and decide every claim at ``dps`` working digits.

    ``sections``, when given, limits the claims decided (and reported) to those
    of these sections (``symseq show`` of one section).

    ``progress``, when given, is called as ``progress(stage, done, total, name)``
    before each derivation is built (stage "building") and each claim is decided
    (stage "checking"), and once more at the end of each stage (``done == total``),
    so a renderer can show a progress bar.
    """
    derivations = list(derivations)
    tick = progress or (lambda *a: None)
    for i, d in enumerate(derivations):
        tick("building", i, len(derivations), d.name)
        d.sections
    tick("building", len(derivations), len(derivations), "")
    keep = None if sections is None else {id(x) for x in sections}
    claims = [c for d in derivations for x in d.sections if keep is None or id(x) in keep for c in x.claims]
    for i, c in enumerate(claims):
        tick("checking", i, len(claims), c.derivation)
        c.check(dps)
    tick("checking", len(claims), len(claims), "")
    return Report(derivations, claims, dps)
