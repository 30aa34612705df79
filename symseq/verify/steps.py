"""Steps: a printed computation decided as the page computed it, from its own printed operands.

A worked example writes ``2.0 · 0.4621 = 0.9242`` and then goes on with 0.9242. Such a step holds when its
left side, computed *exactly from the printed operands* (each decimal a Rational), rounds to the printed
result at the result's printed precision: the same rounding decision as every claim
(:func:`symseq.verify.claims.check_claim`: within half a unit of the last printed digit, or equal for an
integer after ``=``; after ``≈`` an integer is rounded too). A chain ``a = b = c`` is decided link by link:

* a link whose right side is a printed number (or a list of them) is a **result**: it must be the rounding of
  the value of the side before it;
* a link whose right side is another expression is a **rewrite** (``(0.1 − 0.25)/0.364 = −0.15/0.364``): it
  holds when both sides are equal, or when the value of the left lies in the interval the right allows with
  each of its printed decimals widened by half a unit (``0.5·√2 = 0.5·1.414``).

Each result that does not hold also says whether it lies within the accumulated rounding of its printed
operands (:func:`symseq.read.evaluate.interval`): the page's number could be right for operands that
print as these. That is the evidence the classification of errata uses (root, propagated, rounding drift).

Source: issue 13, build item 1; the rounding rule is DESIGN.md's "Claims".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
import sympy as sp

from ..errors import ClaimError, SymseqError
from ..numbers import decimal_text, to_mpf
from ..read import (Bin, Call, Neg, Num, Pow, Ref, Statement, Vec, flat_entries, interval, is_number,
                         numbers, parse_statement, result_parts, show, value)
from .claims import Claim, _equal_exact, check_claim


@dataclass
class Link:
    """One relation of a statement, decided.

    Attributes:
        index: which relation (0 for the first ``=`` or ``≈``).
        left, right: the two sides as printed.
        relation: "=" or "≈".
        kind: "result" (the right side is a printed number or list) or "rewrite".
        ok: whether the link holds.
        printed: the printed entries of a result (row-major), or the right side of a rewrite.
        correct: the correct rounding of each entry at its printed precision (a result), or [].
        values: the exact value of the left side, to 12 significant digits, per entry.
        wrong: indices of the entries that do not hold.
        within_rounding: for a result that does not hold, whether every wrong entry lies within the
            accumulated rounding of the printed operands of the left side (interval arithmetic).
        message: why it does not hold.
        inner: for a rewrite that does not hold because a number printed inside its right side is wrong
            (``tanh(0.9·0.7 + 0.35) = tanh(0.99)``: ``0.9·0.7 + 0.35 = 0.99``), that inner step decided as a result
            (its printed entry, correct rounding and value); else None.
        copy: for an ``inner`` link, whether it is a value printed again wrongly: a name's value
            (``q1 · k1 = [1, 0, 1] · …`` after ``q1 = [1, 0, 0]``; its ``left`` is the name, its ``correct`` the
            name's value), or an entry of a dot product written out (``[1, 0, 0] · [1, 1, 0] = 1*1 + 0*2 + 0*0``).
        at: for a written-out entry, which printed number of the rewrite's right side it is (reading order).
    """

    index: int
    left: str
    right: str
    relation: str
    kind: str
    ok: bool
    printed: list = field(default_factory=list)
    correct: list = field(default_factory=list)
    values: list = field(default_factory=list)
    wrong: list = field(default_factory=list)
    within_rounding: bool = False
    message: str = ""
    inner: "Link | None" = None
    copy: bool = False
    at: int | None = None


def decide(statement, *, dps: int = 50, rounded=None) -> list[Link]:
    """Decide every link of a printed statement from its own printed operands.

    Args:
        statement: the text (``"2.0 · 0.4621 = 0.9242"``) or a parsed
            :class:`~symseq.read.tree.Statement` with at least one relation.
        dps: working digits of the rounding decisions (raised automatically near a rounding boundary).
        rounded: which printed operands may be rounded values, when a result does not hold: None for every printed
            decimal (an author's own step), or a predicate on a :class:`~symseq.read.printed.PrintedNumber`
            (the derivation-free audit: only numbers the page printed as results before). Operands of a link that
            the chain itself printed as results (``tanh(0.5) = 0.4621`` in ``… = 0.4621 · 2 = 0.9242``) may always
            be. A wrong result lies "within the rounding of the printed operands" only through those that may be.

    Returns:
        one :class:`Link` per relation, in order.

    Raises:
        ClaimError: when the text is not an arithmetic statement with a relation, or a side cannot be evaluated
            (a division by zero, a log of a negative number), or the two sides have different shapes.

    >>> [link.ok for link in decide("2.0 · 0.4621 = 0.9242 = 0.924")]
    [True, True]
    """
    st = parse_statement(statement) if isinstance(statement, str) else statement
    if not st.relations:
        raise ClaimError(f"{st.texts[0]!r} states nothing: a step needs = or ≈ and a printed result")
    vals = [value(p) for p in st.parts]
    links = [_link(st, k, vals, dps, rounded) for k in range(len(st.relations))]
    for before, link in zip(links, links[1:]):
        # the terms of a dot product checked against a list the link before found copied wrongly: that copy is
        # the slip (q1 · k1 = [1, 0, 1] · [1, 1, 0] = 1*1 + 0*1 + 0*0), not the terms written from the true one
        if before.inner is not None and before.inner.copy and before.inner.at is None and link.inner is not None \
                and link.inner.at is not None and link.message == link.inner.message:
            link.ok, link.inner, link.message, link.wrong = True, None, "", []
    return links


def inner_steps(statement: Statement) -> list[tuple[int, Statement]]:
    """The results a rewrite prints inside itself: ``tanh((0.9·0.7) + 0.3) = tanh(0.93)`` states
    ``(0.9·0.7) + 0.3 = 0.93``, and ``(0.1 + 0.3)/4 = 0.4/4`` states ``0.1 + 0.3 = 0.4``.

    Both sides of each rewrite link are walked together; where they part, and the right side there is a printed
    number or list while the left computes something, that pair is a step of its own. A link whose sides differ
    in their outer form (``a·b = c + d``) states no inner result.

    Args:
        statement: a parsed :class:`~symseq.read.tree.Statement`.

    Returns:
        (index of the rewrite link, the inner step as a one-relation statement), in reading order.
    """
    out = []
    for k, rel in enumerate(statement.relations):
        left, right = statement.parts[k], statement.parts[k + 1]
        if is_number(right):
            continue
        pairs: list = []
        if not _part(left, right, pairs, top=True):
            continue
        for a, b in pairs:
            out.append((k, Statement((a, b), (rel,), (show(a), show(b)))))
    return out


def _part(a, b, pairs: list, top: bool = False) -> bool:
    """Walk ``a`` and ``b`` together, collecting (computing subtree, printed number) where they part; False when
    they part in a way that is no inner result."""
    return _together(a, b, pairs, lambda x, y, first: not first and is_number(y) and not is_number(x)
                     and not isinstance(x, Ref), top)


def _together(a, b, pairs: list, pair, top: bool = False) -> bool:
    """Walk two trees of one form together; where ``pair(a, b, top)`` says so, collect (a, b) and go no deeper;
    False where they differ in form (an operator, a function, a length) and ``pair`` does not take them."""
    if a == b:
        return True
    if pair(a, b, top):
        pairs.append((a, b))
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, Bin):
        return a.op == b.op and _together(a.left, b.left, pairs, pair) and _together(a.right, b.right, pairs, pair)
    if isinstance(a, Call):
        return a.name == b.name and _together(a.arg, b.arg, pairs, pair)
    if isinstance(a, Neg):
        return _together(a.arg, b.arg, pairs, pair)
    if isinstance(a, Pow):
        return _together(a.base, b.base, pairs, pair) and _together(a.exponent, b.exponent, pairs, pair)
    if isinstance(a, Vec):
        return len(a.items) == len(b.items) and all(_together(x, y, pairs, pair) for x, y in zip(a.items, b.items))
    return False


WITHIN_ROUNDING_NOTE = "holds only from unrounded operands"


def holds(statement, *, dps: int = 50) -> tuple[bool | None, str]:
    """(verdict, a one-line detail): the check of a step claim, one of three verdicts worded once: True, it holds
    from its printed operands; None, it *holds only from unrounded operands* (every failing result lies within the
    rounding of the printed operands: the page may have computed from more digits than it printed, and only the
    true value, ``result=``, decides it); False, it is wrong even allowing the operands' rounding (a root erratum)."""
    try:
        links = decide(statement, dps=dps)
    except SymseqError as exc:
        return False, str(exc)
    bad = [link for link in links if not link.ok]
    if not bad:
        return True, f"{len(links)} link(s) hold from the printed operands"
    if all(link.kind == "result" and link.within_rounding for link in bad):
        return None, f"{WITHIN_ROUNDING_NOTE}: " + "; ".join(link.message for link in bad)
    return False, "; ".join(link.message for link in bad)



def _entries(node):
    """(text, PrintedNumber, sign) of each printed entry of a bare number or list, row-major."""
    if isinstance(node, Num):
        return [(node.number.text, node.number, 1)]
    if isinstance(node, Neg):
        return [("-" + node.arg.number.text, node.arg.number, -1)]
    return [e for i in node.items for e in _entries(i)]


def _shape(x):
    return (len(x),) + _shape(x[0]) if isinstance(x, tuple) and x else ()


def exact_result(st: Statement, k: int, rounded, vals: list | None = None) -> bool:
    """Whether the result part ``k`` of a statement is exactly the value of the part before it, computed from
    operands none of which is ``rounded`` (``0.01 × 0.03 = 3e-4``, ``√0.25 = 0.5``, ``(0.2·0.3 + 0.4·(−0.2))/√2 =
    −0.02/√2`` with exact inputs): a result printed in full, whose decimals are no rounded operands of the links
    after it, nor where the page uses them again. ``2.0 · 0.4621 = 0.9242`` is exact arithmetic, but of a rounded
    0.4621, so its 0.9242 is rounded too. ``vals``: the parts' values, when already computed."""
    if k < 1 or any(rounded(n) for part in st.parts[:k] for n in numbers(part)):
        return False
    try:
        a, b = (vals[k - 1], vals[k]) if vals is not None else (value(st.parts[k - 1]), value(st.parts[k]))
    except SymseqError:
        return False
    return a == b


def _link(st: Statement, k: int, vals: list, dps: int, rounded=None) -> Link:
    left, right = st.parts[k], st.parts[k + 1]
    rel = st.relations[k]
    a, b = vals[k], vals[k + 1]
    if _shape(a) != _shape(b):
        raise ClaimError(f"{st.texts[k]!r} and {st.texts[k + 1]!r} have different shapes "
                         f"({_shape(a) or 'a scalar'} and {_shape(b) or 'a scalar'})")
    base = dict(index=k, left=st.texts[k], right=st.texts[k + 1], relation=rel)
    if rounded is not None and k in result_parts(st) and not exact_result(st, k, rounded, vals):
        rounded = None  # this link's left side is a result the chain printed: every decimal of it may be rounded
    if is_number(right):
        return _result(base, left, right, a, rel, dps, rounded)
    link = _rewrite(base, a, b, right, dps)
    if not link.ok:
        link.inner = _failing_inner(base, left, right, rel, dps, rounded)
    copy = _wrong_copy(base, left, right) or _wrong_term(base, left, right)
    if copy is not None and (link.ok or link.inner is None):
        link.ok, link.inner, link.message = False, copy, copy.message
        link.wrong = link.wrong or [0]
    return link


def _wrong_copy(base: dict, left, right) -> Link | None:
    """A value the page bound to a name and printed again in its place on the right of a rewrite, printed wrongly
    (``q1 · k1 = [1, 0, 1] · [1, 1, 0]`` after ``q1 = [1, 0, 0]``), as a failing result link: the copy as printed,
    and the name's value as the correct one; None when every copy is the value (or it rounded to the copy's
    digits: 0.58 for a name bound to 0.577), or the two sides are not the same computation."""
    pairs: list = []
    if not _copies(left, right, pairs):
        return None
    for ref, lit in pairs:
        mine, theirs = numbers(lit, signed=True), numbers(ref.node, signed=True)
        if len(mine) != len(theirs) or not all(_copied(m, t) for m, t in zip(mine, theirs)):
            printed, correct = show(lit), show(ref.node)
            message = f"{base['left']} {base['relation']} {base['right']}: {printed} is printed for {ref.name} = {correct}"
            return Link(**dict(base, left=ref.name, right=printed), kind="result", ok=False, printed=[printed],
                        correct=[correct], values=[correct], wrong=[0], message=message, copy=True)
    return None


def _wrong_term(base: dict, left, right) -> Link | None:
    """A dot product of two printed lists written out term by term (``[1, 0, 0] · [1, 1, 0] = 1*1 + 0*1 + 0*0``)
    whose terms are not the lists' entries (``0*2`` for ``0*1``: the sum may still be right), as a failing result
    link at the first factor that differs; None when the terms are the entries (in either order) or the sides
    are not of that form."""
    if not (isinstance(left, Bin) and left.op in ("·", "@")):
        return None
    u, v = (x.node if isinstance(x, Ref) else x for x in (left.left, left.right))
    terms: list = []

    def flatten(n):
        if isinstance(n, Bin) and n.op == "+":
            flatten(n.left)
            flatten(n.right)
        else:
            terms.append(n)

    flatten(right)
    if not (isinstance(u, Vec) and isinstance(v, Vec) and is_number(u) and is_number(v)
            and len(u.items) == len(v.items) == len(terms)
            and all(isinstance(t, Bin) and t.op in ("*", "·") and is_number(t.left) and is_number(t.right)
                    for t in terms)):
        return None
    at = 0
    for i, (t, a, b) in enumerate(zip(terms, u.items, v.items)):
        (x,), (y,), (p,), (q,) = (numbers(n, signed=True) for n in (t.left, t.right, a, b))
        if not ((_copied(x, p) and _copied(y, q)) or (_copied(x, q) and _copied(y, p))):
            wrong, want, k = (x, p, at) if not _copied(x, p) else (y, q, at + 1)
            message = (f"{base['left']} {base['relation']} {base['right']}: term {i + 1} prints {wrong.text} for "
                       f"the entry {want.text}")
            return Link(**dict(base, left=f"term {i + 1}", right=wrong.text), kind="result", ok=False,
                        printed=[wrong.text], correct=[want.text], values=[want.text], wrong=[0], message=message,
                        copy=True, at=k)
        at += 2
    return None


def _copied(m, t) -> bool:
    """Whether printed number ``m`` is printed number ``t`` again: the same value, or ``t`` rounded to ``m``'s
    decimals (a copy may print fewer digits)."""
    if m.value == t.value:
        return True
    if m.decimals >= t.decimals:
        return False
    from ..numbers import rounded_text

    return sp.Rational(rounded_text(t.value, decimals=m.decimals)) == m.value


def _copies(a, b, pairs: list) -> bool:
    """Walk ``a`` (a side with names) and ``b`` (the same computation with printed values) together, collecting
    (name, printed value) where a name stands against a printed number or list; False where they differ in form."""
    return _together(a, b, pairs, lambda x, y, first: isinstance(x, Ref) and is_number(y))


def _failing_inner(base: dict, left, right, rel: str, dps: int, rounded) -> Link | None:
    """The one inner step of a failing rewrite (:func:`inner_steps`) whose printed result does not hold, decided
    as a result link; None when there is none, or more than one."""
    pairs: list = []
    if not _part(left, right, pairs, top=True):
        return None
    bad = []
    for x, y in pairs:
        try:
            inner = _result(dict(base, left=show(x), right=show(y)), x, y, value(x), rel, dps, rounded)
        except SymseqError:
            return None
        if not inner.ok:
            bad.append(inner)
    return bad[0] if len(bad) == 1 else None


def _result(base: dict, left, right, a, rel: str, dps: int, may_round=None) -> Link:
    printed, correct, shown, wrong = [], [], [], []
    lefts = list(flat_entries(a))
    entries = _entries(right)
    for i, ((text, number, sign), exact) in enumerate(zip(entries, lefts)):
        rounded = _printed_rounded(rel, number, exact)
        r = check_claim(Claim(text, "value", exact, exact=None if not rounded else False), dps)
        if r.status == "mismatch" and number.percent and exact.is_number:
            exact, r = _as_percentage(exact, r, number, text, rounded, dps)
        if r.status == "error":
            raise ClaimError(f"{base['left']!r}: {r.message}")
        printed.append(text)
        correct.append(r.rounded[0])
        shown.append(decimal_text(to_mpf(exact, 30), 12) if exact.is_number else str(exact))
        if r.status != "ok":
            wrong.append(i)
    ok = not wrong
    within = False
    message = ""
    if not ok:
        within = _within_rounding(left, right, wrong, may_round, rel)
        bad = ", ".join(f"printed {printed[i]}, correct {correct[i]} (value {shown[i]}"
                        + (", truncated" if _truncated(printed[i], shown[i]) else "") + ")" for i in wrong[:4])
        more = f"; {len(wrong) - 4} more" if len(wrong) > 4 else ""
        message = (f"{base['left']} {base['relation']} {base['right']}: {bad}{more}"
                   + (" — within the rounding of the printed operands" if within else ""))
    return Link(**base, kind="result", ok=ok, printed=printed, correct=correct, values=shown, wrong=wrong,
                within_rounding=within, message=message)


def _truncated(printed: str, value: str) -> bool:
    """Whether ``printed`` is ``value`` (a decimal text) cut after the printed digits instead of rounded (0.9999 for
    0.99995430…): the usual slip of a value copied by hand from a longer one."""
    from ..read import read_number

    p = read_number(printed)
    if p is None or p.percent or not p.has_point:
        return False
    try:
        v = sp.Rational(value)
    except (TypeError, ValueError, sp.SympifyError):  # a value shown as a formula: no decimal to cut
        return False
    unit = sp.Rational(1, 10 ** p.decimals)
    cut = sp.floor(abs(v) / unit) * unit * (1 if v >= 0 else -1)
    return cut == p.value and cut != v
def _as_percentage(exact, r, number, text: str, rounded: bool, dps: int) -> tuple:
    """The value a printed percentage stands for, and its check: ``0.3 × 100 = 30%`` computes the figure 30 and
    prints it with a percent sign, ``0.125 = 12.5%`` prints the value 0.125 as a percentage. Of ``exact`` (checked
    as ``r``) and ``exact``/100, the one the printed percentage is right for, else the one nearer its value (what
    the correct figure is shown as)."""
    figure = exact / 100
    alt = check_claim(Claim(text, "value", figure, exact=None if not rounded else False), dps)
    p = number.value
    if alt.status == "ok" or abs(to_mpf(figure, 20) - to_mpf(p, 20)) < abs(to_mpf(exact, 20) - to_mpf(p, 20)):
        return figure, alt
    return exact, r


ROUNDED_INTEGER = 100  # an integer at least this large printed for a value that is not rational was rounded


def _printed_rounded(rel: str, number, value=None) -> bool:
    """Whether a printed result stands for a rounded value: after ``≈``, with a decimal point or as a percentage,
    or an integer of three digits or more printed for a value no integer can be (``e^{10} = 22,026``: an exponential
    printed to the unit). Any other integer after ``=`` is exact (the 2 of ``= [2, 0.6]`` is 2, ``√2 = 1`` is
    wrong)."""
    if rel == "≈" or number.has_point or number.percent:
        return True
    return value is not None and value.is_rational is not True and abs(number.value) >= ROUNDED_INTEGER


def _within_rounding(left, right, wrong: list, may_round=None, rel: str = "≈") -> bool:
    """Whether each wrong printed entry's rounding interval meets the interval of the left side with its printed
    decimals widened by half a unit. A result printed as an integer after ``=`` is exact, as :func:`_result` decides
    it (the 2 of ``= [2, 0.6]`` is 2, not 1.5 to 2.5)."""
    try:
        lo_hi = list(flat_entries(interval(left, widen=True if may_round is None else may_round)))
    except SymseqError:
        return False
    entries = _entries(right)
    for i in wrong:
        _, number, sign = entries[i]
        h = number.half_unit(None) if _printed_rounded(rel, number) else 0
        r = sign * number.value
        with mpmath.workdps(30):
            lo, hi = to_mpf(r - h, 30), to_mpf(r + h, 30)
            a, b = ends(lo_hi[i])
            if not (b >= lo and a <= hi):
                return False
    return True


def _rewrite(base: dict, a, b, right, dps: int) -> Link:
    left_entries, right_entries = list(flat_entries(a)), list(flat_entries(b))
    wrong = [i for i, (x, y) in enumerate(zip(left_entries, right_entries)) if not _equal_exact(x, y)[0]]
    if wrong:
        try:
            bounds = list(flat_entries(interval(right)))
        except SymseqError:
            bounds = None
        if bounds is not None:
            with mpmath.workdps(40):
                wrong = [i for i in wrong if not _inside(to_mpf(left_entries[i], 40), bounds[i])]
    shown = [decimal_text(to_mpf(x, 30), 12) for x in left_entries]
    message = ""
    if wrong:
        message = (f"{base['left']} {base['relation']} {base['right']}: the two sides differ by more than the "
                   f"rounding of the right side's printed numbers allows (left {', '.join(shown[i] for i in wrong[:4])}, "
                   f"right {', '.join(decimal_text(to_mpf(right_entries[i], 30), 12) for i in wrong[:4])})")
    return Link(**base, kind="rewrite", ok=not wrong, printed=[base["right"]], values=shown, wrong=wrong,
                message=message)


def _inside(x, box) -> bool:
    lo, hi = ends(box)
    return bool(lo <= x <= hi)


def ends(box) -> tuple:
    """The two ends of an ``mpmath.iv`` interval as ``mpmath.mpf`` numbers."""
    lo, hi = box._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


@dataclass
class Step:
    """A step claim's check: the statement as printed, and the ledger quantities it stands for.

    Calling it decides the statement from its own printed operands (:func:`holds`) and, with ``result``, the
    printed result against its true value. ``result`` and ``operands`` tie the printed numbers to the
    derivation's quantities, so that the classification of errata (:mod:`symseq.verify.causes`) compares each
    printed number with its true value.

    Attributes:
        statement: the text as printed (``"2.0 · 0.4621 = 0.9242"``).
        result: the quantity the last printed number of the statement stands for (a ledger node, a SymPy
            expression over a ledger's names or an exact number), or None.
        operands: printed operand text → the quantity it stands for (``{"0.4621": L["h_0"]}``); each key must be
            one of the statement's printed numbers.
    """

    statement: str
    result: object = None
    operands: dict = field(default_factory=dict)
    truths: dict = field(default_factory=dict, repr=False)  # "result" or operand text → Claim of its true value

    def __post_init__(self):
        st = parse_statement(self.statement)  # a statement that cannot be read is refused when it is stated
        if not st.relations or not is_number(st.parts[-1]):
            raise ClaimError(f"a step states a computation and its printed result, such as "
                             f"'2.0 · 0.4621 = 0.9242'; {self.statement!r} does not end in a printed number")
        printed = {_signed(e) for p in st.parts for e in _entries_of(p)}
        unknown = [k for k in self.operands if _norm(k) not in printed]
        if unknown:
            raise ClaimError(f"operands {unknown} are not printed numbers of {self.statement!r} "
                             f"(its numbers: {', '.join(sorted(printed))}); key each operand by its printed text")

    @property
    def printed_result(self) -> str:
        """The printed result (the statement's last part), as printed."""
        return parse_statement(self.statement).texts[-1]

    def __call__(self):
        """(holds, detail): the statement holds from its own printed operands and, when ``truths`` holds a claim
        of the result (``result=`` of :meth:`Section.step`), the printed result is also its true value."""
        ok, detail = holds(self.statement)
        truth = self.truths.get("result")
        if ok is False:
            return False, f"wrong from its own printed operands: {detail}"
        if ok is None and truth is None:  # nothing tells whether the page computed from unrounded values
            return False, f"{detail}; give result= to decide it by the true value"
        if truth is not None:
            r = truth.check()
            if r.status != "ok":
                return False, (f"right from its printed operands, but not the true value: {r.message}" if ok else
                               f"{detail}, and not the true value either: {r.message}")
            detail += f"; the printed result is the true value ({r.method})"
        return True, detail

    def links(self, dps: int = 50) -> list[Link]:
        """The decided links of the statement (:func:`decide`)."""
        return decide(self.statement, dps=dps)


def _norm(text: str) -> str:
    return str(text).strip().replace("−", "-")


def _signed(entry) -> str:
    text, number, sign = entry
    return _norm(text)


def _entries_of(node) -> list:
    """(text, PrintedNumber, sign) of every printed number of a tree, a negated number with its sign."""
    from ..read import numbers

    if is_number(node):
        return _entries(node)
    out = [(n.text, n, 1) for n in numbers(node)]
    return out + [("-" + n.text, n, -1) for n in numbers(node)]
