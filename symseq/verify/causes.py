"""Why a claim fails: root errata, the errata they propagate to, and rounding drift (``symseq verify``).

A derivation says how the page computed a printed number with a step claim (``s.step(text, result=…,
operands={…})``, :class:`symseq.verify.steps.Step`). With those ties, each failing claim is classified:

* **root**: a failing step (wrong even from the page's own printed operands; a failing claim of the number it
  prints is the same slip, listed in its chain); or a failing claim no step computes;
* **propagated**: a failing claim whose step holds from its printed operands while an operand's own claim fails
  (that claim is named);
* **rounding drift**: a failing claim whose step holds, no operand's claim fails, and whose true value lies within
  the accumulated rounding of the step's printed operands (each widened by half a unit of its last digit, carried
  through the step by interval arithmetic).

:func:`classify_claims` returns the roots first, each with the chain of claims it caused.

Source: issue 13, build item 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
import sympy as sp

from ..errors import SymseqError
from ..numbers import to_mpf
from .arithmetic import interval, parse_statement
from .steps import Step, ends


@dataclass
class ClaimCause:
    """The classification of a failing claim: ``kind`` root, propagated or drift; ``source`` the failing claim
    upstream (propagated); ``chain`` the failing claims a root caused, directly or through others."""

    claim: object
    kind: str
    reason: str
    source: object = None
    chain: list = field(default_factory=list)


def quantity_key(q) -> str | None:
    """A key naming a claimed quantity across claims: a ledger name (a scalar's symbol, a matrix's reference, an
    item), or the node as written (``H'[1, :]``); None for a plain number."""
    if q is None:
        return None
    name = getattr(q, "name", None)
    if isinstance(q, sp.Symbol) or (isinstance(name, str) and not isinstance(q, sp.Basic)):
        return str(name)
    if isinstance(q, sp.Basic) and not q.free_symbols:
        return None
    return repr(q)


def classify_claims(claims: list, *, dps: int = 50) -> list[ClaimCause]:
    """Classify the failing claims of ``claims`` (checked or not) by the step claims among them.

    Returns:
        one :class:`ClaimCause` per claim whose status is "mismatch": roots (and drift) first, in the claims'
        order, each root's ``chain`` filled; then the propagated ones.
    """
    failing = [c for c in claims if c.check(dps).status == "mismatch"]
    steps = [c for c in claims if isinstance(c.quantity, Step)]
    by_key: dict[str, list] = {}
    for c in failing:
        k = quantity_key(c.quantity)
        if k is not None:
            by_key.setdefault(k, []).append(c)
    causes = {id(c): _classify(c, steps, by_key, dps) for c in failing}
    for cause in causes.values():
        top, seen = cause, set()
        while top.source is not None and id(top.source) in causes and id(top.source) not in seen:
            seen.add(id(top.source))
            top = causes[id(top.source)]
        if top is not cause:
            top.chain.append(cause.claim)
    roots = [c for c in causes.values() if c.source is None]
    return roots + [c for c in causes.values() if c.source is not None]


def _classify(c, steps, by_key, dps) -> ClaimCause:
    if isinstance(c.quantity, Step):
        return ClaimCause(c, "root", f"wrong even from the page's own printed operands: {c.check(dps).message}")
    key = quantity_key(c.quantity)
    step = next((s for s in steps if key is not None and quantity_key(s.quantity.result) == key), None)
    if step is None:
        return ClaimCause(c, "root", "no step claim computes it (s.step(..., result=...) says how the page did)")
    if step.check(dps).status != "ok":  # the same slip as its step's: listed in the step's chain
        return ClaimCause(c, "root", f"its step {step.printed!r} is wrong even from the page's printed operands",
                          source=step)
    for text, node in step.quantity.operands.items():
        k = quantity_key(node)
        upstream = [u for u in by_key.get(k, []) if u is not c] if k is not None else []
        if upstream:
            return ClaimCause(c, "propagated", f"its step {step.printed!r} holds from the printed operands, but "
                                               f"the operand {text} is wrong ({upstream[0].id})", source=upstream[0])
    if _within(step.quantity.statement, c, dps):
        return ClaimCause(c, "drift", f"its step {step.printed!r} holds from the printed operands, which are right "
                                      f"to their digits; the true value lies within their accumulated rounding")
    return ClaimCause(c, "root", f"its step {step.printed!r} holds from the printed operands, but the true value "
                                 f"lies beyond their accumulated rounding (an operand not tied to its quantity?)")


def _within(statement: str, claim, dps: int) -> bool:
    try:
        st = parse_statement(statement)
        box = interval(st.parts[-2])
        vals = claim.check(dps).values
    except SymseqError:
        return False
    boxes = list(box) if isinstance(box, tuple) else [box]
    if len(boxes) != len(vals) or any(isinstance(b, tuple) for b in boxes):
        return False
    with mpmath.workdps(30):
        for v, b in zip(vals, boxes):
            lo, hi = ends(b)
            x = mpmath.mpf(v) if isinstance(v, str) else to_mpf(v, 30)
            if not lo <= x <= hi:
                return False
    return True
