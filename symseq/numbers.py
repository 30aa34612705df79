"""Exact numbers from the way handouts print them.

A handout decimal is a Rational: ``"0.2"`` is 1/5, not the float nearest to
0.2. Python floats are refused wherever a value must stay exact, because the
float 0.1 is 0.1000000000000000055511151231257827..., and that error would
reach every digit symseq later checks.
"""

from __future__ import annotations

import re
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
        ConventionError: for a Python float (inexact) or a string that is not
            a plain decimal or fraction. Strings are never passed to
            ``sympify``: only the two numeric patterns above are read.
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
            f = Fraction(text)
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
    """An mpmath number (or anything mpmath reads exactly) as a 60-significant-digit Decimal, with no float on the way."""
    import mpmath
    from decimal import Decimal

    v = x if isinstance(x, mpmath.mpf) else mpmath.mpf(x)  # mpf(mpf) would round to the current precision
    return Decimal(mpmath.nstr(v, 60, min_fixed=-80, max_fixed=80, strip_zeros=False))


def to_mpf(e, dps: int, ctx=None):
    """An exact SymPy number as an mpmath number correct to ``dps`` digits (±∞ kept), in context ``ctx``."""
    import mpmath

    ctx = ctx or mpmath.mp
    if e is sp.S.NegativeInfinity:
        return ctx.ninf
    if e is sp.S.Infinity:
        return ctx.inf
    return ctx.mpf(sp.Float(sp.N(e, dps + 10), dps + 10)._mpf_)


def round_half_up(d, *, decimals: int | None = None, digits: int | None = None):
    """Round a nonzero Decimal half away from zero, to ``decimals`` places or ``digits`` significant digits.

    In significant-digit mode a carry moves the last digit (9.995 at three digits is 10.0).
    """
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 90
        if decimals is not None:
            return d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
        e = d.adjusted()
        out = d.quantize(Decimal(1).scaleb(e - digits + 1), rounding=ROUND_HALF_UP)
        if out.adjusted() > e:
            out = d.quantize(Decimal(1).scaleb(e - digits + 2), rounding=ROUND_HALF_UP)
        return out


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
