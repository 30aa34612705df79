"""Claims: a number (or formula, shape, property) as the handout prints it, and its check.

A :class:`Claim` holds the printed string exactly as the handout prints it,
the quantity it states (a ledger value, a SymPy expression, a shape, or a
property to prove), its digits, and its location (seed file and section).

Rules (DESIGN.md, "Claims"):

* A printed decimal is right when the exact value lies within half a unit of
  its last printed digit. A table printed "to three significant digits"
  passes ``digits=3``: then 0.15 stands for 0.150 and the half unit is that of
  the third significant digit.
* A printed integer, fraction or formula (``(0,4)``, ``1/4``,
  ``1/(1+e^{1/√2})``) is an exact claim: equal, not merely close. Equality is
  decided by SymPy, or at 60 digits when SymPy cannot simplify the difference.
* Values are computed in exact arithmetic or with mpmath at ``dps`` digits
  (50 by default, raised automatically when a value falls too close to a
  rounding boundary); never in float32, never through Python floats.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import mpmath
import sympy as sp

from ..errors import ClaimError, ClaimMismatch, SymseqError
from ..numbers import decimal_text, rounded_like_scientific, rounded_text, short, to_mpf
from ..values import is_node, ledger_of
from ..read import Printed, PrintedNumber, read_printed
from ..read.number import canonical, is_scientific, written_like

STATUSES = ("ok", "mismatch", "error", "skipped")

_TABLE_LABEL = re.compile(r"\b(Table|Figure)\s+\d+\b")


@dataclass(frozen=True)
class Location:
    """Where a claim (or input) sits in its handout: its section, and the place within the section.

    Attributes:
        section: the section title as the derivation registers it ("§4 The forward pass by hand").
        at: the place within the section as the author names it ("Table 13, row 0: a"; in a notebook, the cell:
            "In [7]", "Out[7]" or "cell 17"), or "".
        table: the table or figure label the place names ("Table 13"), or "".
        row, column: the row and column labels of an entry of :meth:`Section.table`, or "".

    ``str(location)`` is the form shown and written to JSON: ``"section, at"``,
    or the section title alone. No consumer reads that string back.
    """

    section: str
    at: str = ""
    table: str = ""
    row: str = ""
    column: str = ""

    @classmethod
    def of(cls, section: str, at: str = "", *, table: str = "", row: str = "", column: str = "") -> "Location":
        """A location; ``table`` defaults to the first "Table N" or "Figure N" label that ``at`` names."""
        if not table:
            m = _TABLE_LABEL.search(at)
            table = m.group(0) if m else ""
        return cls(section, at, table, str(row), str(column))

    @property
    def after_table(self) -> str:
        """The words of ``at`` after its table label ("Table 4, tanh" → "tanh"): they may name the row."""
        if not self.table or self.table not in self.at:
            return ""
        return self.at[self.at.index(self.table) + len(self.table):].strip(" ,")

    def __str__(self) -> str:
        return f"{self.section}, {self.at}" if self.at else self.section


@dataclass
class Result:
    """The outcome of checking one claim."""

    status: str
    values: list = field(default_factory=list)  # decimal strings, ≥ 30 significant digits, row-major
    shape: tuple = ()
    exact: Any = None  # closed form (SymPy) when short enough to show
    rounded: list = field(default_factory=list)  # correct rendering at the printed digits, per entry
    errors: list = field(default_factory=list)  # (printed − value) in units of the last digit, per entry
    holds: list = field(default_factory=list)  # whether each entry holds (the verdict, entry by entry)
    method: str = ""
    message: str = ""
    fragile: list = field(default_factory=list)  # notes on printed decimals that sit near a rounding boundary
    wrong: list = field(default_factory=list)  # one line per entry that does not hold ("entry [2, 0]: printed …")

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Claim:
    """One checkable statement of a handout.

    Attributes:
        printed: the string as printed ("0.792412", "(0,4)", "4×3", or a sentence for a property).
        kind: "value", "shape" or "property".
        quantity: what the handout states (see :meth:`Section.claim`).
        derivation, source, location: where it comes from (derivation name,
            seed file name, and a :class:`Location`; a plain string is taken
            as a section title).
        what: a short description ("p(B|AB)").
        digits: significant digits of a table, or None for "as printed".
        exact: force (True) or forbid (False) exact comparison; None decides
            from the printed string (a decimal point means rounded).
        in_text: False for a value the handout does not print (an answer it
            leaves to the reader): ``symseq audit`` does not look for it.
        near: text of the line the handout prints it on, when that line is
            outside the claim's section or order is not enough to place it.
        values: the :class:`~symseq.values.Values` service that evaluates it
            (its derivation's; a service of its own when None).
        written: (file, line) of the call in the derivation module that stated it, the line 1-based (set by
            :class:`~symseq.authoring.Section`; the pytest plugin's failure reports point there), or None.
    """

    printed: str
    kind: str
    quantity: Any
    derivation: str = ""
    source: str = ""
    location: Location | str = ""
    what: str = ""
    digits: int | None = None
    exact: bool | None = None
    names: dict = field(default_factory=dict)
    ledger: Any = None
    closed_form: bool = True
    in_text: bool = True
    near: str = ""
    seq: int = 0  # its place among the claims and inputs of its section, in the order they were stated
    skip_reason: str = ""
    written: tuple[str, int] | None = field(default=None, repr=False, compare=False)  # (file, 1-based line)
    values: Any = field(default=None, repr=False, compare=False)
    _results: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _last: Result | None = field(default=None, init=False, repr=False, compare=False)
    _record: dict | None = field(default=None, init=False, repr=False, compare=False)
    _read: tuple | None = field(default=None, init=False, repr=False, compare=False)  # (key, Printed)

    def __post_init__(self):
        if isinstance(self.location, str):
            self.location = Location.of(self.location)

    def __repr__(self) -> str:
        """One line: the claim's id, what the handout prints, and its status (deciding it the first time)."""
        r = self.check()
        why = r.message.splitlines()[0] if r.message and r.status != "ok" else ""
        why = why if len(why) <= 100 else why[:99] + "…"
        return f"Claim({self.id!r}, printed {self.printed!r}: {r.status}" + (f": {why})" if why else ")")

    @property
    def id(self) -> str:
        return f"{self.derivation}::{self.location}" + (f"::{self.what}" if self.what else "")

    @property
    def service(self):
        """The :class:`~symseq.values.Values` service this claim is evaluated with."""
        if self.values is None:
            from ..values import Values

            self.values = Values()
        return self.values

    def read(self) -> Printed:
        """The printed string as the reader reads it (:func:`symseq.read.read_printed`; a shape for a shape claim),
        read once and kept: every check, cause and match of this claim uses this one tree.

        Raises:
            ClaimError: naming the string when it cannot be read.
        """
        key = (self.printed, id(self.names), self.kind)
        if self._read is None or self._read[0] != key:
            self._read = (key, read_printed(self.printed, self.names, shape=self.kind == "shape"))
        return self._read[1]

    @property
    def result(self) -> Result | None:
        """The outcome of the latest :meth:`check`, or None before the first."""
        return self._last

    def check(self, dps: int | None = None) -> Result:
        """Decide this claim at ``dps`` working digits; never raises for a failed check.

        Results are kept per precision: ``check(80)`` after ``check(20)``
        decides again at 80 digits. ``dps=None`` returns the latest result
        (deciding at the service's precision, 50 digits by default, the first time).
        """
        if dps is None:
            if self._last is not None:
                return self._last
            dps = self.service.dps
        dps = int(dps)
        if dps not in self._results:
            self._results[dps] = check_claim(self, dps)
        self._last = self._results[dps]
        return self._last

    def restated(self, printed: str) -> "Claim":
        """This claim with another printed string (an edited number in its place), evaluated by the same service."""
        from dataclasses import replace

        return replace(self, printed=printed, skip_reason="")

    def assert_ok(self, dps: int | None = None):
        """Raise :class:`ClaimMismatch` with the full report unless the claim holds."""
        r = self.check(dps)
        if r.status not in ("ok", "skipped"):
            raise ClaimMismatch(describe(self))

    def detach(self) -> "Claim":
        """Keep this claim's latest result and record, and drop what it was computed from (its quantity, ledger,
        names and Values service), in place; returns the claim.

        What a worker process of :func:`symseq.verify.report.verify` (``symseq verify -j N``) sends back: a
        detached claim pickles, renders and gives its :meth:`record` as before, and is never decided again.
        """
        self._record = self.record()
        self._results = {dps: r for dps, r in self._results.items() if r is self._last}
        self.quantity = self.ledger = self.values = None
        self.names = {}
        return self

    def record(self) -> dict:
        """One JSON-ready record, with the same fields and types for every claim (schema ``symseq-verify/2``,
        ``symseq/schema/verify-2.schema.json``).

        ``value`` is always a list of decimal strings (40 significant digits, ``inf``/``-inf`` for a masked
        entry), row-major, and ``shape`` its dimensions (``[]`` for a scalar; ``[0]`` with no value: a property,
        or a claim that could not be evaluated); for a shape claim, the object's dimensions (``["3", "8"]``,
        shape ``[2]``). ``rounded`` (the correct rendering at the printed digits) and ``error_units`` (printed
        minus value in units of the last digit, null where not a rounded decimal) have one item per entry of a
        value claim; ``exact`` and ``digits`` are null when absent.
        """
        if self._record is not None:  # a detached claim: the record made where it was decided
            return dict(self._record)
        r = self.check()
        value, shape = list(r.values), list(r.shape)
        if self.kind == "shape":
            value = [str(int(n)) for n in self.quantity] if r.status != "error" else []
            shape = [len(value)]
        elif not value:
            shape = [0]
        elif math.prod(shape) != len(value):  # a bug of the check that made the result: never written as is
            raise RuntimeError(f"claim {self.id}: {len(value)} value entries for the shape {tuple(shape)}")
        return {
            "id": self.id,
            "derivation": self.derivation,
            "source": self.source,
            "location": str(self.location),
            "section": self.location.section,
            "what": self.what,
            "kind": self.kind,
            "printed": self.printed,
            "status": r.status,
            "value": value,
            "shape": shape,
            "exact": None if r.exact is None else str(r.exact),
            "digits": self.digits_label(),
            "rounded": list(r.rounded),
            "error_units": [None if e is None else float(e) for e in r.errors],
            "method": r.method,
            "message": r.message,
            "fragile": list(r.fragile),
        }

    def digits_label(self):
        if self.kind != "value":
            return None
        if self.digits is not None:
            return self.digits
        try:
            p = self.read()
        except SymseqError:
            return None
        nums = [e for e in p.entries if isinstance(e, PrintedNumber) and e.has_point]
        return max((e.sig_digits() for e in nums), default=None)


# ---------------------------------------------------------------------------
# values of quantities
# ---------------------------------------------------------------------------


def as_quantity(claim: Claim):
    """(quantity, ledger or None): a node over a ledger, or exact numbers that the Values service converts.

    A SymPy expression over a ledger's scalar names becomes a node on ``claim.ledger``.
    """
    q = claim.quantity
    if is_node(q):
        return q, claim.ledger or ledger_of(q)
    if isinstance(q, sp.Basic) and not isinstance(q, sp.MatrixBase) and q.free_symbols:
        if claim.ledger is None:
            raise ClaimError(
                f"the value of claim {claim.printed!r} has free symbols {sorted(map(str, q.free_symbols))}; "
                f"state it over a ledger (pass ledger=...) or substitute numbers"
            )
        from .. import ops

        return ops.as_node(q), claim.ledger
    if not isinstance(q, (sp.Basic, sp.MatrixBase, int, list, tuple)):
        from ..ledger import Item

        hint = (f"; L[{q.name!r}] is the ledger's record of the row: claim its handle, L.handle({q.name!r}) (or the "
                f"node a block or L.backward returned)" if isinstance(q, Item) else
                "; a claim's value is a ledger node, a SymPy expression, or exact numbers")
        raise ClaimError(f"claim {claim.printed!r}: cannot use a value of type {type(q).__name__}{hint}")
    return q, None


def exact_value(claim: Claim):
    """The exact value (SymPy number or ImmutableMatrix) of a claim's quantity."""
    q, led = as_quantity(claim)
    return claim.service.exact(q, ledger=led)


def numeric_value(claim: Claim, dps: int):
    """Row-major list of mpf values correct to ``dps`` digits, and the shape."""
    q, led = as_quantity(claim)
    return claim.service.numeric(q, dps, ledger=led)


# ---------------------------------------------------------------------------
# deciding
# ---------------------------------------------------------------------------


def round_like(x, p: PrintedNumber, sig: int | None) -> str:
    """Correct rendering of ``x`` at the printed precision (:func:`symseq.numbers.rounded_text`; in the printed
    scientific form, ``8.68e-02``, when the printed string has an exponent; as a percentage, ``12.5%``, when it is
    one), with the printed string's minus sign."""
    if p.percent:  # a percentage: the value times 100, at the digits printed, with the page's percent sign
        s = rounded_text(x * 100, decimals=p.decimals - 2, digits=sig) + ("\\%" if p.text.endswith("\\%") else "%")
    else:  # in the printed notation: 8.68e-02, 8 × 10^{-3}, 49,152
        plain = rounded_like_scientific(x, canonical(p.text), sig) or rounded_text(x, decimals=p.decimals, digits=sig)
        s = written_like(plain, p)
    return s.replace("-", "−") if p.text.strip().startswith("−") else s


def _is_exact_relation(claim: Claim, p: Printed) -> bool:
    """Exact unless the printed string has a decimal point or the claim states significant digits.

    In a table printed to three significant digits, "2" stands for 2.00 and is a rounded value.
    """
    if claim.exact is not None:
        return claim.exact
    if claim.digits is not None and all(isinstance(e, PrintedNumber) for e in p.entries):
        return False
    return not p.approximate


SIMPLIFY_OPS = 30
"""A difference of two exact values that is zero to 60 digits is simplified (to say "exact") only up to this many
operations: past it SymPy's simplify takes seconds and, on Week 8's nested exponentials, fails anyway."""


def _equal_exact(a, b) -> tuple[bool, str]:
    """Decide a == b for SymPy numbers: different when their difference is not zero to 60 digits; equal exactly
    when SymPy shows it (structurally, by expansion, or by simplifying a difference of at most
    :data:`SIMPLIFY_OPS` operations), else equal to 60 digits."""
    if a is None or b is None:
        return False, ""
    if a == b:
        return True, "exact"
    if (a in (sp.oo, -sp.oo)) or (b in (sp.oo, -sp.oo)):
        return False, "exact"
    d = sp.expand(a - b)
    if d == 0:
        return True, "exact"
    v = sp.N(d, 60)  # numbers first: a difference that is not zero to 60 digits never reaches simplify
    if not (v.is_number and abs(v) < sp.Float("1e-55")):
        return False, "exact"
    if sp.count_ops(d) <= SIMPLIFY_OPS:
        try:
            if d.is_number and sp.simplify(d) == 0:
                return True, "exact (simplified)"
        except Exception:  # SymPy may fail to simplify; the digits decide
            pass
    return True, "equal to 60 digits"


def check_claim(claim: Claim, dps: int = 50) -> Result:
    if claim.skip_reason:
        return Result("skipped", message=claim.skip_reason)
    try:
        if claim.kind == "shape":
            return _check_shape(claim)
        if claim.kind == "property":
            return _check_property(claim)
        return _check_value(claim, dps)
    except SymseqError as exc:
        return Result("error", message=str(exc))
    except Exception as exc:  # a bug in a derivation's check must not stop the other claims
        return Result("error", message=f"{type(exc).__name__} while checking this claim: {exc}")


def _check_shape(claim: Claim) -> Result:
    p = claim.read()
    want = tuple(int(d) for d in p.entries)
    got = tuple(claim.quantity)
    text = "×".join(str(g) for g in got)
    if want == got:
        return Result("ok", values=[text], method="shape")
    why = ""
    if len(want) == 1 and len(got) == 2 and 1 in got:  # torch.Size([4]) of a vector held as a 1×4 row
        why = (f" (the page prints a one-dimensional shape; symseq holds a vector as a {text} matrix: claim the "
               f"shape as {text}, or claim the length with s.claim)")
    return Result("mismatch", values=[text], method="shape",
                  message=f"printed {claim.printed} = {'×'.join(map(str, want))}, but the object is {text}{why}")


def _check_property(claim: Claim) -> Result:
    check: Callable = claim.quantity
    out = check()
    ok, detail = (out if isinstance(out, tuple) else (bool(out), ""))
    return Result("ok" if ok else "mismatch", values=[], method="proof", message=detail)


def _check_value(claim: Claim, dps: int) -> Result:
    p = claim.read()
    exact_rel = _is_exact_relation(claim, p)
    vals, shape = numeric_value(claim, dps)
    n_printed = len(p.entries)
    if len(vals) != n_printed:  # the text prints a value of another shape: a mismatch, not a broken claim
        return Result("mismatch", values=[decimal_text(v) for v in vals[:6]], shape=shape,
                      message=f"wrong shape: printed {claim.printed!r} has {n_printed} "
                              f"entr{'y' if n_printed == 1 else 'ies'}, the value is "
                              f"{'×'.join(map(str, shape)) or 'a scalar'} ({len(vals)} entries)")
    formula = any(not isinstance(e, PrintedNumber) for e in p.entries)
    exact = None
    if formula or (claim.closed_form and _exact_forms(claim)):
        try:
            exact = exact_value(claim)
        except SymseqError:
            if formula:
                raise
    exact_entries = None
    if exact is not None:
        exact_entries = list(exact) if isinstance(exact, sp.MatrixBase) else [exact]
    statuses, rounded, errors, methods, fragile = [], [], [], set(), []
    for idx, (e, v) in enumerate(zip(p.entries, vals)):
        ex = exact_entries[idx] if exact_entries is not None else None
        if isinstance(e, PrintedNumber) and not exact_rel:
            ok, rnd, err, how = _check_rounded(claim, e, v, ex, dps, idx)
            if ok and err is not None and 0.5 - abs(err) <= FRAGILE_UNITS:
                fragile.append(_fragile_note(claim, e, v, err, idx, shape))
            err = err if err is None or err == float("inf") else round(err, 3)
        else:
            target = e.value if isinstance(e, PrintedNumber) else e
            ok, how = _equal_exact(ex, target) if ex is not None else (_close(v, target, dps), f"{dps} digits")
            shown = e if isinstance(e, PrintedNumber) else None
            rnd = (_show_exact(ex, shown) if ex is not None else decimal_text(v, 12)) if not ok else (
                e.text if isinstance(e, PrintedNumber) else str(e))
            err = None
        statuses.append(ok)
        rounded.append(rnd)
        errors.append(err)
        methods.add(how)
    status = "ok" if all(statuses) else "mismatch"
    res = Result(status, values=[decimal_text(v) for v in vals], shape=shape,
                 exact=_displayable(exact), rounded=rounded, errors=errors, holds=list(statuses),
                 method=", ".join(sorted(m for m in methods if m)), fragile=fragile)
    if status == "mismatch":
        res.wrong = _wrong_entries(claim, p, vals, shape, statuses, rounded, errors)
        res.message = _mismatch_message(res.wrong, len(statuses))
    return res


def _exact_forms(claim: Claim) -> bool:
    """Whether to compute the exact closed form for display: always for SymPy values, per ledger otherwise."""
    q, led = as_quantity(claim)
    return not is_node(q) or (led is not None and getattr(led, "exact_forms", True))


def _displayable(exact):
    if exact is None:
        return None
    entries = list(exact) if isinstance(exact, sp.MatrixBase) else [exact]
    if all(getattr(e, "is_Atom", False) or sp.count_ops(e) <= 40 for e in entries):  # a number: no operation
        return exact
    return None


def _terminates(q: int) -> bool:
    """Whether 1/q has a finite decimal expansion (q has no prime factor but 2 and 5)."""
    q = int(q)
    for f in (2, 5):
        while q % f == 0:
            q //= f
    return q == 1


def _show_exact(e, printed: PrintedNumber | None = None) -> str:
    """An exact value as a correction shows it: a terminating decimal in the printed number's notation (``49,152``,
    ``8 × 10^{-3}``), anything else as SymPy writes it (``1/3``, ``sqrt(2)/2``)."""
    if printed is not None and isinstance(e, sp.Rational) and _terminates(e.q):
        from decimal import Decimal, localcontext

        with localcontext() as ctx:
            ctx.prec = 1000
            d = (Decimal(int(e.p)) / Decimal(int(e.q))).normalize()
        if is_scientific(printed) and d:
            plain = f"{format(d.scaleb(-d.adjusted()), 'f')}e{d.adjusted()}"
        else:
            plain = format(d, "f")
        return written_like(plain, printed)
    return str(e)


def _close(v, target, dps) -> bool:
    with mpmath.workdps(dps + 10):  # the target must not be rounded to mpmath's default 15 digits
        t = to_mpf(target, dps)
        if mpmath.isinf(t) or mpmath.isinf(v):
            return t == v
        return abs(v - t) <= mpmath.mpf(10) ** (-(dps - 10)) * max(1, abs(t))


def _check_rounded(claim: Claim, e: PrintedNumber, v, ex, dps, idx=0):
    """ok, correct rendering, error (printed − value) in units of the last digit (unrounded), method."""
    half = e.half_unit(claim.digits)
    rnd = round_like(v, e, claim.digits)
    if half == 0:  # a printed 0 in a significant-digit table means exactly zero
        ok = (ex == 0) if ex is not None else v == 0
        return ok, rnd, None if ok else float("inf"), "exact zero"
    work = dps
    while True:
        with mpmath.workdps(work + 10):
            p = mpmath.mpf(int(e.value.p)) / int(e.value.q)
            h = mpmath.mpf(int(half.p)) / int(half.q)
            diff = p - v
            margin = abs(abs(diff) - h)
            close = margin < mpmath.mpf(10) ** (-(work - 8))
            ok = abs(diff) <= h
            units = float(diff / (2 * h))
        if not close or work >= 400:
            break
        work *= 2  # too close to the rounding boundary at this precision: recompute
        v = numeric_value(claim, work)[0][idx]
    if close and ex is not None:  # a tie at every precision tried: decide exactly
        ok = bool(sp.Abs(e.value - ex) <= half)
    return ok, rnd, units, f"{dps} digits" if work == dps else f"{work} digits"


FRAGILE_UNITS = 0.01  # a printed decimal this close (in units of its last digit) to a rounding boundary is noted


def _fragile_note(claim: Claim, e: PrintedNumber, v, err: float, idx: int, shape: tuple) -> str:
    """For a printed decimal that holds but whose value lies within :data:`FRAGILE_UNITS` of a unit of its last
    digit from the rounding boundary (``err`` is printed − value in units of that digit, as
    :func:`_check_rounded` decided it): where it is, and the digits a float32 and a float64 computation of the
    same rows print (another order of operations may print the other digit)."""
    half = e.half_unit(claim.digits)
    boundary = e.value - half if err > 0 else e.value + half  # err > 0: the value lies below the printed one
    margin = 0.5 - abs(err)  # distance to the boundary, in units of the last printed digit
    q, led = as_quantity(claim)
    shown = []
    for dtype in ("float32", "float64"):
        try:
            x = claim.service.floats(q, dtype, ledger=led)[0][idx]
        except SymseqError:  # a value the NumPy backend cannot compute (an exact-only function): no float digit
            continue
        shown.append(f"{dtype} prints {round_like(mpmath.mpf(x), e, claim.digits)}")
    where = entry_label(idx, shape)
    return (f"{where + ': ' if where else ''}printed {e.text} lies {short(mpmath.mpf(margin) * 100, 2)}% of a unit from the "
            f"rounding boundary {short(boundary, 12)} (value {decimal_text(v, 12)})"
            + (f"; {', '.join(shown)}" if shown else ""))


def entry_label(idx: int, shape: tuple) -> str:
    """The place of entry ``idx`` (row-major) of a value of ``shape`` as NumPy and torch index it, from 0:
    ``"entry [2, 0]"`` (row, column) in a matrix of several rows and columns, ``"entry [4]"`` in a vector or a
    single row or column, ``""`` for a scalar. The audit and the claims name entries with it alike."""
    if len(shape) == 2 and shape[0] > 1 and shape[1] > 1:
        return f"entry [{idx // shape[1]}, {idx % shape[1]}]"
    return f"entry [{idx}]" if math.prod(shape or (1,)) > 1 else ""


def _wrong_entries(claim, p, vals, shape, statuses, rounded, errors) -> list[str]:
    """One line per entry that does not hold, in order: where, printed, correct rounding, value, error in units."""
    out = []
    for i, ok in enumerate(statuses):
        if ok:
            continue
        e = p.entries[i]
        printed = e.text if isinstance(e, PrintedNumber) else str(e)
        where = entry_label(i, shape) if len(statuses) > 1 else ""
        err = errors[i]
        unit = f", off by {err:+.2f} units of the last digit" if isinstance(err, float) and err != float("inf") else ""
        out.append(f"{where + ': ' if where else ''}printed {printed}, correct {rounded[i]} "
                   f"(value {decimal_text(vals[i], 12)}){unit}")
    return out


def _mismatch_message(wrong: list[str], n: int) -> str:
    """Every wrong entry of a value of ``n`` entries (the JSON report and the pytest plugin show them all)."""
    head = f"{len(wrong)} of {n} entries wrong: " if n > 1 else ""
    return head + "; ".join(wrong)


def describe(claim: Claim) -> str:
    """A one-paragraph report of a claim's outcome (used by errors and the pytest plugin)."""
    r = claim.check()
    head = f"{claim.source} {claim.location}" + (f" ({claim.what})" if claim.what else "")
    if r.status == "ok":
        return f"{head}: {claim.printed} holds ({r.method})"
    return f"{head}: {claim.printed} — {r.status}: {r.message}"
