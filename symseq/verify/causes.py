"""Why a claim fails: root errata, the errata they propagate to, and rounding drift (``symseq verify``).

A derivation says how the page computed a printed number with a step claim (``s.step(text, result=…,
operands={…})``, :class:`symseq.verify.steps.Step`). With those ties, each failing claim is classified:

* **root**: a step wrong even from the page's own printed operands (a failing claim of the number it prints is the
  same slip, listed in its chain); or a failing claim no step computes;
* **propagated**: a step (or a claim computed by one) that holds from its printed operands while an operand is
  not its true value (the step or claim that printed that operand wrongly is named);
* **rounding drift**: a step that holds from its printed operands, each right to its digits, whose result is not
  its true value but lies within the accumulated rounding of those operands (each widened by half a unit of its
  last digit, carried through the step by interval arithmetic).

:func:`classify_claims` returns the roots first, each with the chain of claims it caused.

Source: issue 13, build item 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
import sympy as sp

from ..errors import SymseqError
from ..numbers import to_mpf
from .arithmetic import interval, numbers, parse_statement
from .steps import Step, ends, holds


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
        k = quantity_key(c.quantity.result if isinstance(c.quantity, Step) else c.quantity)
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
        return _classify_step(c, steps, by_key, dps)
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
    untied = _untied(step.quantity.statement, step.quantity.operands)
    if untied:
        return ClaimCause(c, "root", f"its step {step.printed!r} holds from the printed operands, but {untied}")
    if _within(step.quantity.statement, c, dps):
        return ClaimCause(c, "drift", f"its step {step.printed!r} holds from the printed operands, which are right "
                                      f"to their digits; the true value lies within their accumulated rounding")
    return ClaimCause(c, "root", f"its step {step.printed!r} holds from the printed operands, but the true value "
                                 f"lies beyond their accumulated rounding (an operand not tied to its quantity?)")


def _classify_step(c, steps, by_key, dps) -> ClaimCause:
    """A failing step claim: root when it fails from its printed operands; else (its printed result is not the true
    value) propagated from a wrong operand, or drift within the operands' rounding, or a root."""
    step: Step = c.quantity
    if not holds(step.statement, dps=dps)[0]:
        return ClaimCause(c, "root", c.check(dps).message)
    for text, truth in step.truths.items():
        if text == "result" or truth.check(dps).status == "ok":
            continue
        k = quantity_key(truth.quantity)
        upstream = next((u for u in by_key.get(k, []) if u is not c), None) if k is not None else None
        if upstream is None:  # the step that printed that operand wrongly
            upstream = next((s for s in steps if s is not c and k is not None
                             and quantity_key(s.quantity.result) == k and s.check(dps).status == "mismatch"), None)
        where = f" ({upstream.id})" if upstream is not None else ""
        return ClaimCause(c, "propagated", f"{step.statement!r} holds from its printed operands, but the operand "
                                           f"{text} is not its true value{where}", source=upstream)
    truth = step.truths.get("result")
    untied = _untied(step.statement, step.operands)
    if untied:
        return ClaimCause(c, "root", f"{step.statement!r} holds from its printed operands, but {untied}")
    if truth is not None and _within(step.statement, truth, dps):
        return ClaimCause(c, "drift", f"{step.statement!r} holds from its printed operands, which are right to their "
                                      f"digits; the true value lies within their accumulated rounding")
    return ClaimCause(c, "root", f"{step.statement!r} holds from its printed operands, but the true value lies "
                                 f"beyond their accumulated rounding (an operand not tied with operands=?)")


def _untied(statement: str, operands: dict) -> str:
    """Why a step cannot be drift, or "": the printed decimal operands of its last computation that ``operands=``
    does not tie to a quantity. A step is drift only when each of them is known to be right to its digits
    (integers are exact)."""
    try:
        st = parse_statement(statement)
    except SymseqError:
        return ""
    tied = {str(k).strip().replace("−", "-").lstrip("+-") for k in operands}
    out = []
    for n in numbers(st.parts[-2]):
        t = n.text.replace("−", "-").lstrip("+-")
        if n.has_point and t not in tied and t not in out:
            out.append(t)
    if not out:
        return ""
    one = len(out) == 1
    return (f"{', '.join(out)} {'is' if one else 'are'} not tied to {'its quantity' if one else 'their quantities'} "
            f"(operands=), so whether the slip is upstream or rounding cannot be told")


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
