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

A failing claim that no step computes is traced through its ledger (:func:`trace`): its rows are evaluated again
with the rows upstream of it set to the values the page printed for them (the claims before it), as the page's
own computation would have it. A table row "E + P = final" or a NumPy cell ``W -= eta * dW`` prints no
statement, but the ledger knows the computation.

:func:`classify_claims` returns the roots first, each with the chain of claims it caused.

Source: issue 13, build item 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
import sympy as sp

from .. import ops
from ..errors import SymseqError
from ..numbers import to_mpf
from ..read import flat_entries, interval, numbers, parse_statement
from .claims import as_quantity
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
    cache: dict = {}
    causes = {id(c): _classify(c, claims, steps, by_key, dps, cache) for c in failing}
    for cause in causes.values():
        top, seen = cause, set()
        while top.source is not None and id(top.source) in causes and id(top.source) not in seen:
            seen.add(id(top.source))
            top = causes[id(top.source)]
        if top is not cause:
            top.chain.append(cause.claim)
    roots = [c for c in causes.values() if c.source is None]
    return roots + [c for c in causes.values() if c.source is not None]


def _classify(c, claims, steps, by_key, dps, cache) -> ClaimCause:
    if isinstance(c.quantity, Step):
        return _classify_step(c, steps, by_key, dps)
    key = quantity_key(c.quantity)
    step = next((s for s in steps if key is not None and quantity_key(s.quantity.result) == key), None)
    if step is None:
        return trace(c, claims, dps, cache=cache) or ClaimCause(
            c, "root", "wrong where it is printed: neither a step claim (s.step) nor the values printed upstream of it "
                       "in its ledger give it")
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
    verdict = holds(step.statement, dps=dps)[0]
    if verdict is False:  # wrong even allowing the rounding of its printed operands
        return ClaimCause(c, "root", c.check(dps).message)
    if verdict is None and step.truths.get("result") is None:
        return ClaimCause(c, "drift", f"{step.statement!r} holds only from unrounded operands: its printed result "
                                      f"lies within the rounding of the printed operands (give result= to decide it)")
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
    """Whether the true values of ``claim`` lie within the rounding of the operands of ``statement``'s last
    computation (:func:`within_rounding`)."""
    try:
        st = parse_statement(statement)
        vals = claim.check(dps).values
    except SymseqError:
        return False
    return within_rounding(st.parts[-2], vals)


def within_rounding(node, values) -> bool:
    """Whether each of ``values`` lies within the interval of ``node``, a tree of the arithmetic grammar: its printed
    decimal operands each widened by half a unit of their last digit and carried through its operations
    (:func:`symseq.read.evaluate.interval`), entry by entry in row order. The one rounding-of-operands test of
    the causes of ``symseq verify`` and of ``symseq audit`` (:mod:`symseq.audit.causes`).

    Args:
        node: the computation (the left side of a step).
        values: its true values, one per entry in row order: exact numbers (SymPy, Fraction, int), ``mpmath.mpf``
            or decimal strings (read at 30 digits).

    Returns:
        False as well when ``node`` has no interval (names, functions the grammar cannot bound) or its number of
        entries is not that of ``values``.
    """
    try:
        boxes = list(flat_entries(interval(node)))
    except SymseqError:
        return False
    if len(boxes) != len(values):
        return False
    with mpmath.workdps(30):
        for v, b in zip(values, boxes):
            lo, hi = ends(b)
            x = mpmath.mpf(v) if isinstance(v, (str, mpmath.mpf)) else to_mpf(v, 30)
            if not lo <= x <= hi:
                return False
    return True


def trace(c, claims: list, dps: int = 50, *, cache: dict | None = None) -> ClaimCause | None:
    """The cause of the failing claim ``c`` from its ledger and the values the page printed before it, or None.

    ``c``'s quantity is evaluated again with each row upstream of it (its rows' ancestors, not its own rows) set
    entry by entry to the value a claim before it printed for it (the latest such claim wins; a row the page
    never printed keeps its true value). A printed vector stands for every row of a matrix quantity whose rows
    have its length, as NumPy broadcasts it (``U -= eta * dU`` with ``dU`` printed as a vector). Then:

    * **propagated** when ``c``'s printed value is what the printed values of the *failing* claims upstream give
      (the latest failing claim that enters is named), or what all printed values give, some failing;
    * **drift** when it is what the printed values of the claims that hold give: the true values lie within their
      rounding, so the true value of ``c`` lies within the rounding carried through the ledger's rows;
    * None when the printed value follows from none of these (or ``c`` is not a value over a ledger), or when a
      failing claim printed with it (same section and place, same rows: the other cells of a matrix claimed cell
      by cell) does not follow either: a block of which one cell happens to match is not explained by it.

    Args:
        c: a failing value claim (:class:`~symseq.verify.claims.Claim`) whose quantity is a node over a ledger.
        claims: the claims of the page in its order, ``c`` among them; those before ``c`` are its upstream (claims
            of other sections of its derivation count when their ledger gives the rows they print the same values
            as ``c``'s ledger).
        cache: a dict kept across the calls of one classification (what each claim prints of which rows).

    Source: issue 13, build item 1 (a computation the page prints no statement of).
    """
    cache = {} if cache is None else cache
    found = _trace_alone(c, claims, dps, cache)
    if found is None:
        return None
    for other in claims:
        if other is not c and _printed_with(other, c) and other.check(dps).status == "mismatch" \
                and _trace_alone(other, claims, dps, cache) is None:
            return None
    return found


def _node(c):
    """(node, ledger) of a value claim over a ledger, else (None, None)."""
    if c.kind != "value" or isinstance(c.quantity, Step):
        return None, None
    try:
        q, led = as_quantity(c)
    except SymseqError:
        return None, None
    return (q, led) if isinstance(q, ops.Node) and led is not None else (None, None)


def _printed_with(a, b) -> bool:
    """Whether claims ``a`` and ``b`` print parts of one block: one derivation, section and place, same rows."""
    if (a.derivation, a.location) != (b.derivation, b.location):
        return False
    (qa, _), (qb, _) = _node(a), _node(b)
    return qa is not None and qb is not None and ops.refs(qa) == ops.refs(qb)


def _trace_alone(c, claims: list, dps: int, cache: dict) -> ClaimCause | None:
    if ("trace", id(c)) in cache:
        return cache["trace", id(c)]
    cache["trace", id(c)] = None  # a block's cells check each other
    cache["trace", id(c)] = out = _trace_one(c, claims[:next(i for i, x in enumerate(claims) if x is c)], dps, cache)
    return out


def _trace_one(c, earlier: list, dps: int, cache: dict) -> ClaimCause | None:
    q, led = _node(c)
    if q is None:
        return None
    own = ops.refs(q)
    try:
        upstream = set(led.needed(own)) - own
    except SymseqError:
        return None
    held, failing = {}, {}
    for u in earlier:
        if u.derivation != c.derivation:
            continue
        if (id(u), id(led)) not in cache:
            cache[id(u), id(led)] = _printed_rows(u, led, cache)
        for key, value in cache[id(u), id(led)]:
            if key[0] in upstream:
                held[key] = (value, u)
    if not held:
        return None
    for u in {id(u): u for _, u in held.values()}.values():
        failing[id(u)] = u.check(dps).status == "mismatch"
    bad = {k: v for k, v in held.items() if failing[id(v[1])]}
    good = {k: v for k, v in held.items() if not failing[id(v[1])]}
    for kind, chosen in (("propagated", bad), ("drift", good), ("propagated", held)):
        if not chosen or (kind == "propagated" and not bad):
            continue
        if _gives(c, q, led, chosen, dps, cache):
            if kind == "drift":
                return ClaimCause(c, "drift", "it is what the ledger gives from the values printed upstream, "
                                              "which are right to their digits: the true value lies within their "
                                              "rounding")
            source = _entering(c, q, led, chosen, [u for u in earlier if failing.get(id(u))], dps, cache)
            return ClaimCause(c, "propagated", f"it is what the ledger gives from the values printed upstream, but "
                                               f"{source.printed!r} ({source.id}) is wrong", source=source)
    return None


def _printed_rows(u, led, cache: dict):
    """((row name, entry index), (low, printed, high)) for each entry that claim ``u`` prints of a row of ``led``:
    the printed value and the ends of its rounding, carried back to the entry when the claim prints a function of
    it (a standard deviation √v for the variance v); nothing for a claim that is not a plain printed value of one
    ledger row."""
    from ..read import PrintedNumber

    qu, lu = _node(u)
    if qu is None:
        return []
    names = ops.refs(qu)
    if len(names) != 1:
        return []
    (name,) = names
    if lu is not led:
        if (id(lu), id(led), name) not in cache:
            cache[id(lu), id(led), name] = _same_row(lu, led, name, _values(cache))
        if not cache[id(lu), id(led), name]:
            return []
    try:
        p = u.read()
        entries = _values(cache).in_entries_of(qu, name)
    except SymseqError:
        return []
    symbols = [lu.symbol(name)] if lu[name].is_scalar else list(lu.entry_symbols(name))
    cells = list(entries.flat) if hasattr(entries, "flat") else [entries]
    if not all(isinstance(e, PrintedNumber) for e in p.entries):
        return []
    printed = [(e.value - e.half_unit(u.digits), e.value, e.value + e.half_unit(u.digits)) for e in p.entries]
    index = {s: k for k, s in enumerate(symbols)}
    shape = entries.shape if hasattr(entries, "shape") else ()
    if len(printed) != len(cells) and len(shape) == 2 and shape[1] == len(printed) and shape[0] > 1:
        printed = printed * shape[0]  # a vector printed for a matrix: NumPy broadcasts it over the rows
    if len(printed) != len(cells):
        return []
    out = []
    for cell, bounds in zip(cells, printed):
        if cell in index:
            out.append(((name, index[cell]), bounds))
            continue
        free = cell.free_symbols if isinstance(cell, sp.Basic) else set()
        if len(free) != 1 or next(iter(free)) not in index:
            return []
        (x,) = free
        back = [_solve(cell, x, v) for v in bounds]
        if any(b is None for b in back):
            return []
        lo, mid, hi = back
        out.append(((name, index[x]), (min(lo, hi), mid, max(lo, hi))))
    return out


def _solve(f, x, value):
    """The one real x with f(x) = value (f a monotone function of one entry: √v, e^z), or None."""
    try:
        roots = [r for r in sp.solve(sp.Eq(f, value), x) if r.is_real]
    except (NotImplementedError, ValueError, TypeError):
        return None
    return roots[0] if len(roots) == 1 else None


def _same_row(a, b, name: str, values) -> bool:
    """Whether ledgers ``a`` and ``b`` (two sections' builds of one page) both have row ``name`` with one value."""
    if name not in b or a[name].shape != b[name].shape:
        return False
    try:
        va, vb = (values.numeric(ops.Ref(name, led[name].shape, led), 30)[0] for led in (a, b))
    except SymseqError:
        return False
    return va == vb


def _gives(c, q, led, held: dict, dps: int, cache: dict) -> bool:
    """Whether ``c``'s printed value is what ``q`` evaluates to with the rows of ``held`` set to printed values:
    each printed entry within half a unit of the value, or of the values the printed values' rounding allows (the
    page computed with the digits it did not print: each printed value moved to the ends of its rounding, one at a
    time, to first order, after a rough bound with all of them moved at once rules out what is far outside)."""
    from ..read import PrintedNumber

    point = _recompute(q, led, {k: v[0][1] for k, v in held.items()}, dps, cache)
    p = c.read()
    if point is None or len(p.entries) != len(point) or not all(isinstance(e, PrintedNumber) for e in p.entries):
        return False
    with mpmath.workdps(dps):
        miss = [abs(to_mpf(e.value, dps) - v) - to_mpf(e.half_unit(c.digits), dps) for e, v in zip(p.entries, point)]
    if all(m <= 0 for m in miss):
        return True
    together = [_recompute(q, led, {j: v[0][end] for j, v in held.items()}, dps, cache) for end in (0, 2)]
    if any(t is None for t in together):
        return False
    rough = [abs(a - v) + abs(b - v) for a, b, v in zip(*together, point)]
    if any(m > 10 * r for m, r in zip(miss, rough)):  # far outside even a rough bound of the rounding: not its value
        return False
    slack = [mpmath.mpf(0)] * len(point)
    for k, ((lo, _, hi), _) in held.items():
        worst = [mpmath.mpf(0)] * len(point)
        for end in (lo, hi):
            moved = _recompute(q, led, {j: (end if j == k else v[0][1]) for j, v in held.items()}, dps, cache)
            if moved is None:
                return False
            worst = [max(w, abs(x - y)) for w, x, y in zip(worst, moved, point)]
        slack = [s + w for s, w in zip(slack, worst)]
    return all(m <= s for m, s in zip(miss, slack))


def _recompute(q, led, held: dict, dps: int, cache: dict):
    """Row-major mpmath values of ``q`` with the entries of ``held`` ((row, index) -> exact value) in place, or
    None when the ledger cannot be evaluated so."""
    try:
        return _values(cache).numeric_with(q, held, dps, ledger=led)
    except (SymseqError, ZeroDivisionError):
        return None


def _values(cache: dict):
    """The Values service of one classification (each ledger's true rows computed once)."""
    from ..values import Values

    if "values" not in cache:
        cache["values"] = Values()
    return cache["values"]


def _entering(c, q, led, chosen: dict, failing: list, dps: int, cache: dict):
    """The failing claim upstream to name (``failing``: those before ``c``, in order): the latest one whose printed
    values ``c`` no longer follows without, else the latest one whose printed values are in ``chosen``."""
    claims = [u for u in failing if any(v[1] is u for v in chosen.values())]
    for u in reversed(claims):
        if not _gives(c, q, led, {k: v for k, v in chosen.items() if v[1] is not u}, dps, cache):
            return u
    return claims[-1]
