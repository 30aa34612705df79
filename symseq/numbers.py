"""Numbers: exact values from the way handouts print them, and every rounding symseq does.

A handout decimal is a Rational: ``"0.2"`` is 1/5, not the float nearest to
0.2. Python floats are refused wherever a value must stay exact, because the
float 0.1 is 0.1000000000000000055511151231257827..., and that error would
reach every digit symseq later checks.

Rounding lives here and nowhere else, with one rule: half away from zero, on a
decimal expansion of the value with no float on the way (:func:`round_half_up`).
The claim checker decides with it (a printed decimal is right when the value
lies within half a unit of its last digit, so the correct rendering is
:func:`round_half_up` of the value), and every display rounds with it too:
:func:`decimal_text` (the values of a claim's result, the value column of
``symseq verify``, messages) and :func:`handout_decimal` (tables and heatmaps
as the handouts print them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from .errors import ConventionError

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FRACTION = re.compile(r"[+-]?\d+/\d+")


def exact(value: Any, *, what: str = "value") -> sp.Expr:
    """Return ``value`` as an exact SymPy number or expression.

    Accepts int, :class:`fractions.Fraction`, decimal strings (``"0.2"`` →
    1/5, ``"-1.5e-3"``), fraction strings (``"1/4"``) and SymPy expressions
    (kept as they are, so ``sqrt(2)`` and ``-oo`` stay exact).

    Raises:
        ConventionError: for a Python float (inexact), a string that is not
            a plain decimal or fraction, or a fraction whose denominator is 0 (``"1/0"``). Strings are never passed to
            ``sympify``: only the two numeric patterns above are read.

    >>> exact("0.2"), exact("-1.5e-3"), exact("1/4")
    (1/5, -3/2000, 1/4)
    """
    if isinstance(value, bool):
        raise ConventionError(f"{what}: got the bool {value!r}; give 0 or 1 if a number is meant")
    if isinstance(value, sp.Basic):
        if value.has(sp.Float):
            f = next(iter(value.atoms(sp.Float)))
            raise ConventionError(
                f"{what}: {value} contains the SymPy Float {f}, which is not exact (a float such as 0.2 reached "
                f"SymPy before symseq could read it). Write the number as a string ('{_plain(f)}'), "
                f"sympy.Rational or symseq.exact('{_plain(f)}')."
            )
        return value
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, float):
        from decimal import Decimal

        raise ConventionError(
            f"{what}: got the float {value!r}, which is not exact (as a float it is {Decimal(value):.30g}...). "
            f"Give the number as printed, as a string ('{value!r}') or a Fraction."
        )
    if isinstance(value, str):
        text = value.strip().replace("\u2212", "-")
        if _DECIMAL.fullmatch(text) or _FRACTION.fullmatch(text):
            try:
                f = Fraction(text)
            except ZeroDivisionError:
                raise ConventionError(f"{what}: {value!r} divides by zero; a fraction needs a denominator other "
                                      f"than 0") from None
            return sp.Rational(f.numerator, f.denominator)
        raise ConventionError(
            f"{what}: cannot read {value!r} as a number; expected a decimal such as '0.2' "
            f"or a fraction such as '1/4'. Build other expressions with SymPy (sympy.sqrt(2))."
        )
    try:  # numpy integer scalars and similar
        import numbers

        if isinstance(value, numbers.Integral):
            return sp.Integer(int(value))
    except Exception:  # pragma: no cover - defensive
        pass
    raise ConventionError(f"{what}: cannot use {value!r} of type {type(value).__name__} as an exact number")


def to_decimal(x):
    """An mpmath number (or anything mpmath reads exactly) as a 60-significant-digit Decimal, with no float on the way.

    An mpf of any mpmath context keeps its own precision (its binary value is printed, not re-rounded to the
    global 15 digits)."""
    import mpmath
    from decimal import Decimal

    raw = x._mpf_ if hasattr(x, "_mpf_") else mpmath.mpf(x)._mpf_
    return Decimal(mpmath.libmp.to_str(raw, 60, min_fixed=-80, max_fixed=80, strip_zeros=False))


def to_mpf(e, dps: int, ctx=None):
    """An exact SymPy number as an mpmath number correct to ``dps`` digits (±∞ kept), in context ``ctx``.

    Without ``ctx`` the number is rounded to ``dps`` digits whatever mpmath's global precision is, so that a
    claim's verdict never depends on it (at a global 30 digits, 1.2 rounded there exceeded the same 1.2
    computed at 40 digits, and a bound that holds with equality failed).
    """
    import mpmath

    if e is sp.S.NegativeInfinity:
        return (ctx or mpmath.mp).ninf
    if e is sp.S.Infinity:
        return (ctx or mpmath.mp).inf
    raw = sp.Float(sp.N(e, dps + 10), dps + 10)._mpf_
    if ctx is not None:
        return ctx.mpf(raw)
    with mpmath.workdps(dps):
        return mpmath.mpf(raw)


def round_half_up(d, *, decimals: int | None = None, digits: int | None = None):
    """Round a nonzero Decimal half away from zero, to ``decimals`` places or ``digits`` significant digits.

    In significant-digit mode a carry moves the last digit (9.995 at three digits is 10.0).
    """
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 90
        if decimals is not None:  # the result has d.adjusted() + decimals + 1 digits: give the context room
            ctx.prec = max(90, d.adjusted() + decimals + 3)
            return d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
        e = d.adjusted()
        out = d.quantize(Decimal(1).scaleb(e - digits + 1), rounding=ROUND_HALF_UP)
        if out.adjusted() > e:
            out = d.quantize(Decimal(1).scaleb(e - digits + 2), rounding=ROUND_HALF_UP)
        return out


VALUE_DIGITS = 40  # significant digits of the values a claim's result carries (terminal, JSON)


def as_decimal(x):
    """``x`` as a Decimal: exactly for an int, Rational or decimal string, else from 60 significant digits of
    an mpmath number (:func:`to_decimal`). Infinities and NaN are not numbers here (ValueError)."""
    from decimal import Decimal, localcontext

    if isinstance(x, str):
        return Decimal(x.replace("\u2212", "-"))
    if isinstance(x, (int, sp.Integer)):
        return Decimal(int(x))
    if isinstance(x, sp.Rational):
        with localcontext() as ctx:
            ctx.prec = 90
            return Decimal(int(x.p)) / Decimal(int(x.q))
    return to_decimal(x)


def _significant(d, digits: int, fixed: tuple, strip_zeros: bool) -> tuple[str, int | None]:
    """A nonzero Decimal rounded half away from zero to ``digits`` significant digits: (its fixed-point text,
    None) when its decimal exponent lies strictly inside ``fixed``, else (its mantissa, its exponent)."""
    from decimal import localcontext

    with localcontext() as ctx:
        ctx.prec = 90
        out = round_half_up(d, digits=digits)  # 9.995 → 10.0: the exponent follows the carry
        e = out.adjusted()
        text = format(out, "f") if fixed[0] < e < fixed[1] else format(out.scaleb(-e), "f")
        if strip_zeros and "." in text:
            text = text.rstrip("0").rstrip(".")
        return (text, None) if fixed[0] < e < fixed[1] else (text, e)


def decimal_text(x, digits: int = VALUE_DIGITS, *, fixed: tuple = (-30, 40), strip_zeros: bool = False,
                 integer: bool = False) -> str:
    """``x`` rounded half away from zero to ``digits`` significant digits, as text (ASCII minus).

    Args:
        x: an mpmath number, a SymPy Rational, an int or a decimal string.
        digits: significant digits.
        fixed: decimal exponents (exclusive) between which the text is fixed-point; scientific outside
            (``1.5e-35``).
        strip_zeros: drop trailing zeros after the point (``0.150`` → ``0.15``).
        integer: print an exact integer value as an integer (``3``, not ``3.00000``).

    ``inf``, ``-inf`` and ``nan`` print as such; zero prints ``0``.
    """
    import mpmath
    from decimal import localcontext

    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return x
    if hasattr(x, "_mpf_"):  # an mpf of any mpmath context
        if mpmath.isinf(x):
            return "-inf" if x < 0 else "inf"
        if mpmath.isnan(x):
            return "nan"
    d = as_decimal(x)
    if d == 0:
        return "0"
    if integer and d == d.to_integral_value():
        with localcontext() as ctx:
            ctx.prec = 90
            return format(d.to_integral_value(), "f")
    text, e = _significant(d, digits, fixed, strip_zeros)
    return text if e is None else f"{text}e{e:+d}"


def short(x, digits: int = 6) -> str:
    """``x`` in a message or a proof's detail: ``digits`` significant digits, trailing zeros dropped,
    scientific outside 10⁻⁶ … 10¹² (``0.000123``, ``1.34e-51``); :func:`decimal_text` rounds it."""
    return decimal_text(x, digits, fixed=(-6, 12), strip_zeros=True)


def rounded_text(x, *, decimals: int | None = None, digits: int | None = None) -> str:
    """``x`` rounded half away from zero as a handout prints it: to ``decimals`` places (zeros kept, ``0.150``)
    or to ``digits`` significant digits (a significant-digit rounding of zero is ``0``).

    >>> rounded_text("0.1495", decimals=2), rounded_text("0.15", decimals=3), rounded_text("-2.675", digits=3)
    ('0.15', '0.150', '-2.68')
    """
    from decimal import localcontext

    d = as_decimal(x)
    if digits is not None and d == 0:
        return "0"
    out = round_half_up(d, decimals=decimals, digits=None) if digits is None else round_half_up(d, digits=digits)
    with localcontext() as ctx:
        ctx.prec = 90
        return format(out, "f")


_SCIENTIFIC = re.compile(r"^[+-]?(\d+)(?:\.(\d*))?([eE])([+-]?)(\d+)$")


def rounded_like_scientific(x, printed: str, digits: int | None = None) -> str | None:
    """``x`` rounded (half away from zero) and written in the scientific form of ``printed``: its mantissa's
    decimals (or ``digits`` significant digits), its exponent letter, sign and exponent width; None when
    ``printed`` is not in scientific notation. A carry moves the exponent (9.996e-3 at two decimals is 1.00e-2).

    >>> rounded_like_scientific("0.086803", "8.69e-02"), rounded_like_scientific(-0.00012715, "-2.54e-04")
    ('8.68e-02', '-1.27e-04')
    """
    from decimal import Decimal

    m = _SCIENTIFIC.match(printed.strip().replace("\u2212", "-"))
    if m is None:
        return None
    places = digits - 1 if digits else len(m.group(2) or "")
    d = as_decimal(x)
    e = 0 if d == 0 else d.adjusted()
    mant = round_half_up(d.scaleb(-e), decimals=places) if d else Decimal(0).quantize(Decimal(1).scaleb(-places))
    if abs(mant) >= 10:
        e += 1
        mant = round_half_up(d.scaleb(-e), decimals=places)
    sign = "-" if e < 0 else ("+" if m.group(4) else "")
    return f"{format(mant, 'f')}{m.group(3)}{sign}{abs(e):0{len(m.group(5))}d}"


@dataclass(frozen=True)
class Decimalish:
    """A rounded number as sign, digits and exponent, so each medium can typeset it.

    ``text`` is the plain rendering (ASCII minus): ``-0.175``, ``0.0502``,
    ``1.2e-07``; ``mantissa``/``exponent`` give 1.2 × 10⁻⁷ for scientific form.
    """

    text: str
    mantissa: str = ""
    exponent: int | None = None
    special: str = ""  # "inf", "-inf", "nan" or ""

    @property
    def negative(self) -> bool:
        return self.text.startswith("-")


def handout_decimal(x, digits: int = 3, *, decimals: int | None = None, sci_below: int = -5,
                    sci_above: int = 9) -> Decimalish:
    """Round ``x`` as a handout prints it.

    Args:
        x: an mpmath number (or anything mpmath reads exactly: int, SymPy
            Float, decimal string), or an exact SymPy Rational; ±∞ is kept as
            a special value.
        digits: significant digits (three in Week 06's tables).
        decimals: instead, a fixed number of digits after the point, as a
            printed entry shows them (``0.2`` → 1, ``0.150`` → 3).
        sci_below, sci_above: decimal exponents outside which scientific
            notation is used (``1.2e-07``).

    Returns:
        a :class:`Decimalish`; exact zero prints ``0``; rounding is half away
        from zero (:func:`round_half_up`) and trailing zeros are dropped in
        significant-digit mode (0.150 → ``0.15``), kept in fixed-decimals mode.
        A Rational rounds exactly: a tie such as 0.175 rounds away from zero, as printed.
    """
    import mpmath
    from decimal import localcontext

    if isinstance(x, sp.Rational):
        if x == 0:
            return Decimalish("0")
        d = as_decimal(x)
    else:
        v = x if hasattr(x, "_mpf_") else mpmath.mpf(x)  # an mpf of any context keeps its precision
        if mpmath.isinf(v):
            return Decimalish("inf" if v > 0 else "-inf", special="inf" if v > 0 else "-inf")
        if mpmath.isnan(v):
            return Decimalish("nan", special="nan")
        if v == 0:
            return Decimalish("0")
        d = to_decimal(v)
    with localcontext() as ctx:
        ctx.prec = 90
        if decimals is not None:
            out = round_half_up(d, decimals=decimals)
            text = format(out, "f")
            return Decimalish(text.lstrip("-") if out == 0 else text)
    mant, e = _significant(d, digits, (sci_below, sci_above), True)
    return Decimalish(mant) if e is None else Decimalish(f"{mant}e{e:+03d}", mantissa=mant, exponent=e)


def near_tie(v, digits: int | None, decimals: int | None) -> bool:
    """Whether the mpmath number ``v`` lies within 10⁻³⁵ (relative) of a halfway point of the rounding asked for
    (``decimals`` places, else ``digits`` significant digits, six by default): there its binary value may fall
    on either side, and the exact value must decide."""
    import mpmath
    from decimal import Decimal, localcontext

    if not hasattr(v, "_mpf_") or not mpmath.isfinite(v) or v == 0:
        return False
    with localcontext() as ctx:
        ctx.prec = 90
        d = abs(to_decimal(v))
        q = Decimal(1).scaleb(-decimals) if decimals is not None else Decimal(1).scaleb(d.adjusted() - (digits or 6) + 1)
        r = (d / q) % 1
        return abs(r - Decimal("0.5")) < Decimal("1e-35") * (d / q)


def _plain(f: sp.Float) -> str:
    return format(float(f), "g")


def exact_matrix(rows: Any, *, what: str = "matrix") -> sp.ImmutableMatrix:
    """Return a nested list (rows are positions) or SymPy matrix as an exact ImmutableMatrix.

    Each entry goes through :func:`exact`. A flat list is one row (1×n).

    Raises:
        ConventionError: for inexact or unreadable entries.
        ShapeError: for ragged rows.
    """
    from .errors import ShapeError

    if isinstance(rows, sp.MatrixBase):
        return sp.ImmutableMatrix(rows.applyfunc(lambda e: exact(e, what=what)))
    try:
        import numpy as np

        if isinstance(rows, np.ndarray):
            rows = rows.tolist()
    except ImportError:  # pragma: no cover
        pass
    rows = list(rows)
    if rows and not isinstance(rows[0], (list, tuple)):
        rows = [rows]
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ShapeError(f"{what}: rows have different lengths {sorted(widths)}; every row needs the same width")
    return sp.ImmutableMatrix([[exact(e, what=f"{what}[{i},{j}]") for j, e in enumerate(r)] for i, r in enumerate(rows)])
