"""Why a number is wrong: root errata, the errata they propagate to, and rounding drift.

A worked example computes from its own printed numbers, so one slip shows up again wherever the page reuses it.
For each erratum of an audit (a printed number that differs from its true value), the printed computation it comes
from is found on its line (:func:`symseq.audit.arithmetic.statements_of`) and decided from the page's own printed
operands (:mod:`symseq.verify.steps`):

* **root**: the step that prints it is wrong even from the page's own printed inputs (``tanh(1.1265) ≈ 0.809``:
  tanh(1.1265) = 0.80982 prints 0.810); or the number is printed as an input with no earlier erratum it copies;
  or the page prints no computation of it (then the reason says so);
* **propagated**: the step is right from its printed inputs, but one of those inputs is itself an erratum
  (``0.18 + 0.5·0.809 + 0.3 = 0.8845`` holds from 0.809, and 0.809 is wrong): the upstream erratum is named; a
  wrong number printed again as an input of a step, or the same quantity printed again with the same wrong digits
  (or fewer of them: −0.481 again as −0.48), is propagated from its first printing;
* **rounding drift**: the step is right from its printed inputs, none of them is an erratum, and the true value
  lies within the accumulated rounding of those inputs (each widened by half a unit of its last digit and carried
  through the step with :mod:`mpmath` interval arithmetic, :func:`symseq.read.evaluate.interval`).

The root errata come first, each with the chain of errata it caused (directly or through others).

Source: issue 13, build item 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SymseqError
from ..read import Ref, Vec, numbers
from ..read import read_number
from ..verify.steps import decide
from .arithmetic import statements_of, word_statements_of
from ..read.document import Document

KINDS = ("root", "propagated", "drift")


@dataclass
class Cause:
    """The classification of one erratum (:class:`symseq.audit.report.Erratum`).

    Attributes:
        erratum: the erratum.
        kind: "root", "propagated" or "drift".
        reason: why, in words (the step and what it gives from the printed operands).
        source: for a propagated erratum, the erratum upstream it comes from; else None.
        chain: for a root, every erratum it caused (directly or through others), in the text's order.
        traced: False for a root that is one only because no printed computation of it was found.
    """

    erratum: object
    kind: str
    reason: str
    source: object = None
    chain: list = field(default_factory=list)
    traced: bool = True  # False for a root only because the text prints no computation of it

    @property
    def root(self):
        """The root erratum this one comes from (itself for a root or drift)."""
        return self.erratum if self.source is None else self.source


def _entries(printed: str) -> list:
    """The printed numbers of an erratum's printed text: one number (``18,532`` read whole), or a list."""
    whole = read_number(printed)
    if whole is not None:
        return [whole]
    out = []
    for part in printed.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ").split(","):
        n = read_number(part.strip())
        if n is not None:
            out.append(n)
    return out


def _same(a, b) -> bool:
    return abs(a.value) == abs(b.value) and a.decimals == b.decimals


def _holds_number(node, wanted) -> bool:
    have = numbers(node)
    return bool(wanted) and all(any(_same(w, h) for h in have) for w in wanted)


def classify(doc: Document, errata: list, *, claims: list = (), dps: int = 50) -> list[Cause]:
    """Classify each of ``errata`` (see the module docstring); roots first, each followed by its chain.

    Args:
        doc: the handout the errata were found in.
        errata: :class:`~symseq.audit.report.Erratum` records with a line.

    Returns:
        one :class:`Cause` per erratum: the roots (and drift) in the text's order, each root's ``chain`` filled;
        the propagated ones after them.
    """
    located = [e for e in errata if e.line is not None]
    steps = statements_of(doc) + [(readings[0], spans, lg) for readings, spans, lg in word_statements_of(doc)
                                  if len(readings) == 1]
    causes: dict[int, Cause] = _from_steps(errata, claims, dps)
    for e in sorted(located, key=lambda x: x.line):
        if getattr(e, "kind", "") == "statement":  # it cannot hold, or its own operands make it false
            causes[id(e)] = Cause(e, "root", e.fault)
        elif id(e) not in causes:
            causes[id(e)] = _classify_one(e, located, steps, causes, dps)
    for e in errata:
        if id(e) in causes:
            continue
        # a claim whose number a step claim printing the same text took: the one statement that prints it
        wanted = _entries(e.printed)
        hits = [(st, spans) for st, spans, _ in steps if _holds_number(st.parts[-1], wanted)]
        if len(hits) == 1:
            st, spans = hits[0]
            causes[id(e)] = _classify_one(e, located, [(st, spans, None)], causes, dps, line=spans[-1][0])
        else:
            causes[id(e)] = Cause(e, "root", "not located in the text: no printed computation to trace", traced=False)
    _from_ledger(errata, claims, causes, dps)
    roots = [c for c in causes.values() if c.source is None]
    for c in causes.values():
        top = c
        seen = set()
        while top.source is not None and id(top.source) not in seen:
            seen.add(id(top.source))
            top = causes[id(top.source)]
        if top is not c:
            top.chain.append(c.erratum)
    propagated = [c for c in causes.values() if c.source is not None]
    return sorted(roots, key=lambda c: c.erratum.line or 0) + sorted(propagated, key=lambda c: c.erratum.line or 0)


def _from_steps(errata, claims, dps) -> dict:
    """Causes of the errata that a derivation's step claims (``s.step``) print, as :mod:`symseq.verify.causes`
    decides them from the steps' ties to ledger quantities."""
    from ..verify.causes import classify_claims
    from ..verify.steps import Step

    if not any(isinstance(c.quantity, Step) for c in claims):
        return {}
    by_id = {}
    for e in errata:
        by_id.setdefault(e.source, e)
    out = {}
    for cc in classify_claims(list(claims), dps=dps):
        e = by_id.get(cc.claim.id)
        if e is None or not isinstance(cc.claim.quantity, Step):
            continue
        source = by_id.get(cc.source.id) if cc.source is not None else None
        out[id(e)] = Cause(e, cc.kind, cc.reason, source=source)
    return out


def _from_ledger(errata, claims, causes: dict, dps) -> None:
    """Trace through its ledger (:func:`symseq.verify.causes.trace`) each erratum of a claim that is a root only
    because the text prints no computation of it: a table row ``E + P``, a NumPy cell ``W -= eta * dW``, a matrix
    product over several lines. The erratum upstream named is the latest one of the claim the trace names that is
    printed no later."""
    from ..verify.causes import trace

    claims = list(claims)
    by_id: dict = {}
    for c in claims:
        by_id.setdefault(c.id, []).append(c)
    cache: dict = {}
    for e in errata:
        cause = causes.get(id(e))
        if cause is None or cause.traced:  # an input's or the page arithmetic's erratum names no claim
            continue
        c = _claim_of(e, by_id.get(e.source, []), dps)
        if c is None:
            continue
        found = trace(c, claims, dps, cache=cache)
        if found is None:
            continue
        source = None
        if found.source is not None:
            theirs = [o for o in errata if o.source == found.source.id and o is not e]
            before = [o for o in theirs if o.line is not None and e.line is not None and o.line <= e.line]
            source = max(before, key=lambda o: o.line) if before else theirs[0] if theirs else None
            if source is None:
                continue
        causes[id(e)] = Cause(e, found.kind, found.reason, source=source)


def _claim_of(e, candidates: list, dps):
    """The failing claim that erratum ``e`` reports, among the claims with its id."""
    failing = [c for c in candidates if c.check(dps).status == "mismatch"]
    if len(failing) <= 1:
        return failing[0] if failing else None
    wanted = _entries(e.printed)
    hits = [c for c in failing if all(any(_same(w, n) for n in _entries(c.printed)) for w in wanted)]
    return hits[0] if hits else None


def _classify_one(e, errata, steps, causes, dps, line: int | None = None) -> Cause:
    wanted = _entries(e.printed)
    line = e.line if line is None else line
    for st, spans, _ in steps:
        lines = {s[0] for s in spans}
        if line not in lines:
            continue
        at = [k for k, part in enumerate(st.parts) if spans[k][0] == line and _holds_number(part, wanted)]
        if not at:
            continue
        try:
            links = decide(st, dps=dps)
        except SymseqError as exc:
            k = max(at)
            return Cause(e, "root", f"its step {st.texts[k - 1]} = {st.texts[k]} cannot be decided ({exc})")
        # where several parts print the number (small integers of vectors), the one a failing link prints
        k = max([j for j in at if j > 0 and not links[j - 1].ok] or at)
        if k == 0:
            return _copied(e, errata, causes, f"printed as an input of {_text(st)}")
        link = links[k - 1]
        step = f"{link.left} {link.relation} {link.right}"
        if not link.ok and link.inner is not None and link.inner.copy:  # a name's value printed again wrongly
            return Cause(e, "root", "wrong where it is printed: " + link.inner.message.split(": ", 1)[-1])
        if not link.ok and _own_entries_wrong(link, wanted):
            again = _printed_again(e, errata, same_quantity_only=True)
            if again is not None:  # a table restating the wrong row computed above it
                return Cause(e, "propagated", f"the wrong value of line {again.line}, printed again", source=again)
            shown = link.inner or link
            got = ", ".join(shown.correct) if shown.correct else ", ".join(shown.values)
            return Cause(e, "root", f"wrong even from the page's own printed operands: {link.left} gives {got}")
        upstream = _upstream(e, st.parts[:k], spans[:k], errata)
        if upstream is not None:
            return Cause(e, "propagated", f"{step} holds from the printed operands, but {upstream.printed} "
                                          f"(line {upstream.line}) is wrong", source=upstream)
        if _within(st.parts[k - 1], e):
            return Cause(e, "drift", f"{step} holds from the printed operands, which are right to their digits; "
                                     f"the true value {e.value} lies within their accumulated rounding")
        return Cause(e, "root", f"{step} holds from the printed operands, which are right to their digits, but "
                                f"the true value {e.value} lies beyond their accumulated rounding")
    return _copied(e, errata, causes, "", alone=True)


def _copied(e, errata, causes, where: str, alone: bool = False) -> Cause:
    """An erratum printed as an input (or with no step): propagated from an earlier erratum printing the same
    number, else a root."""
    other = _printed_again(e, errata, same_quantity_only=alone)
    if other is not None:
        return Cause(e, "propagated", f"the wrong value of line {other.line}, printed again"
                     + (f" ({where})" if where else ""), source=other)
    if alone:
        return Cause(e, "root", "the page prints no computation of it on its line: a root unless a step "
                                "(s.step) says how it was computed", traced=False)
    return Cause(e, "root", f"wrong where it is first printed ({where})", traced=False)


def _printed_again(e, errata, *, same_quantity_only: bool):
    """The earlier erratum whose printed numbers erratum ``e`` prints again (each of its entries one of the other's,
    or one of them rounded to fewer digits when both are the same quantity), or None; with ``same_quantity_only``
    only an erratum of the same quantity (the same true value, or ``e``'s value one entry of it)."""
    wanted = _entries(e.printed)
    for other in errata:
        if other is e or other.line is None or e.line is None or other.line >= e.line:
            continue
        same_quantity = _same_value(e.value, other.value)
        if same_quantity_only and not same_quantity:
            continue
        theirs = _entries(other.printed)
        if theirs and all(any(_same(w, o) or (same_quantity and _rounded_from(w, o)) for o in theirs)
                          for w in wanted):
            return other
    return None


def _same_value(mine, theirs) -> bool:
    """Whether the true value of an erratum (``mine``) is that of another or one entry of it: grad_0 printed alone
    is the first entry of the grad printed as a list before."""
    a, b = [v.strip() for v in str(mine).split(",")], {v.strip() for v in str(theirs).split(",")}
    return str(mine) == str(theirs) or (len(a) == 1 and a[0] != "" and a[0] in b)


def _rounded_from(w, o) -> bool:
    """Whether the printed ``w`` is the printed ``o`` rounded to fewer digits (−0.481 printed again as −0.48)."""
    from decimal import Decimal

    from ..numbers import rounded_text

    if o.decimals <= w.decimals:
        return False
    return Decimal(rounded_text(o.value, decimals=w.decimals)) == Decimal(str(w.text).replace("−", "-"))


def _text(st) -> str:
    out = [st.texts[0]]
    for rel, t in zip(st.relations, st.texts[1:]):
        out += [rel, t]
    return " ".join(out)


def _own_entries_wrong(link, wanted) -> bool:
    """Whether a failing link fails at the erratum's own printed entries: a list result such as ``[0.149/1.517,
    1.0/1.517, 0.368/1.517] ≈ [0.098, 0.659, 0.242]`` may fail at 0.242 and hold at 0.098, and then 0.098 is
    classified as a result that holds from its operands (a rewrite, or a result the erratum is not one entry of,
    fails as a whole)."""
    if link.kind != "result":
        return True
    mine = [i for i, p in enumerate(link.printed)
            if (n := read_number(p)) is not None and any(_same(w, n) for w in wanted)]
    return not mine or any(i in link.wrong for i in mine)


def _through_names(node) -> list:
    """The printed numbers a tree reaches through names (:class:`~symseq.read.tree.Ref`): values the page
    printed on an earlier line and uses here by name (``z_t * h_hat`` with ``h_hat = … = [0.500, 0.337]``)."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Ref):
            out += numbers(n.node)
        elif isinstance(n, (Vec,)):
            todo += list(n.items)
        else:
            todo += [getattr(n, k) for k in ("arg", "left", "right", "base", "exponent") if hasattr(n, k)]
    return out


def _upstream(e, parts, spans, errata):
    """The erratum among the printed operands of ``parts`` (the step's inputs), if any: printed on the step's own
    line, or printed on an earlier line and used here by its name; else an earlier erratum whose digits an operand
    prints again (y_2 = 2.0 · 0.7790 = 1.558 below tanh(1.04621) ≈ 0.7790, where 0.7790 is wrong), the latest
    one, for operands of two decimals or more (a 2 or a 0.5 printed again is no evidence of a copy)."""
    copied = []
    for part, (line, a, b) in zip(parts, spans):
        have, named = numbers(part), _through_names(part)
        for other in errata:
            if other is e or other.line is None:
                continue
            mine = have if other.line == line else named if other.line < line else ()
            theirs = _entries(other.printed)
            if any(_same(w, h) for w in theirs for h in mine):
                return other
            if other.line < line and any(_same(w, h) and w.decimals >= 2 for w in theirs for h in have):
                copied.append(other)
    return max(copied, key=lambda o: o.line) if copied else None


def _within(left, e) -> bool:
    """Whether each true value of ``e`` lies within the interval of the step's left side (operands widened,
    :func:`symseq.verify.causes.within_rounding`)."""
    from ..verify.causes import within_rounding

    numbers_ = [read_number(v.strip()) for v in str(e.value).split(",")]
    return all(n is not None for n in numbers_) and within_rounding(left, [n.value for n in numbers_])
