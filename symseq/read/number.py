"""A printed number: its text, its exact value and the precision it is printed to.

:func:`read_number` is the project's one function from the text of a printed number to its value. It reads
exactly what the grammar's ``NUMBER`` terminal (``printed.lark``) matches, with an optional sign in front:

* decimals and integers, signed with ``-``, ``+`` or U+2212 ``−``: ``0.792412``, ``−0.99``, ``.5``;
* exponents, with either minus: ``1e-3``, ``2.5e−3``, ``1E5``; and the scientific form ``1.5 × 10^{-3}``,
  ``1.5 \\times 10^{-3}``, ``2·10^4`` (one number; its precision is the mantissa's);
* thousands grouped by one rule: ``12,832``, ``1 000`` with a narrow (U+202F), thin (U+2009) or plain no-break
  (U+00A0) space, ``1\\,000`` in LaTeX; groups of three digits after a first group of one to three not starting
  with 0 (inside brackets a comma separates entries instead: see the grammar);
* percentages, ``35%`` and LaTeX's ``35\\%``: the value is the number over 100, printed to two more decimals
  (``12.5%`` is 0.125 to the nearest 0.0005).

NumPy's print of a float with no decimals, ``1.`` and ``1.e-01``, is read too when it is the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from . import grammar

NUMBER = grammar.terminal("NUMBER")
"""The grammar's NUMBER terminal, as a regular expression: a printed number, unsigned (the module docstring)."""
SIGNED_NUMBER = re.compile(r"[-\u2212]?(?:" + NUMBER + ")")
"""A printed number with an optional minus sign (``-`` or U+2212), compiled."""

SEPARATOR = r"(?:,|\u202f|\u2009|\u00a0|\\,)"
"""What may stand between groups of three digits (the grammar's rule): a comma, a narrow, thin or plain no-break
space, LaTeX's ``\\,``."""
_GROUP = re.compile(SEPARATOR)
_SCIENTIFIC = re.compile(r"\s*(?:×|·|⋅|\\times|\\cdot)\s*10\s*\^\s*\{?\s*([-+\u2212]?\d+)\s*\}?$")
_NUMPY_WHOLE = re.compile(r"\d+\.(?:[eE][-+\u2212]?\d+)?$")


@dataclass
class PrintedNumber:
    """One printed number: its text, exact value and printed precision.

    Attributes:
        text: as printed.
        value: the exact value (a SymPy Rational); a percentage's is the number over 100.
        decimals: digits after the decimal point of the value (negative for a positive exponent; a percentage
            has two more than it prints).
        has_point: whether it prints a decimal point (a printed decimal may be rounded; an integer is exact).
        percent: whether it is printed as a percentage.
    """

    text: str
    value: sp.Rational
    decimals: int
    has_point: bool
    percent: bool = False

    @property
    def is_zero(self) -> bool:
        return self.value == 0

    def sig_digits(self) -> int:
        """Significant digits as printed (0.00930 → 3, 0.792412 → 6, 120 → 3, 12,832 → 5, 35% → 2)."""
        mantissa = _mantissa(self.text)
        digits = mantissa.replace(".", "").lstrip("0")
        if "." in mantissa:
            return max(len(digits), 1)
        return max(len(digits.rstrip("0")), 1) if digits else 1

    def half_unit(self, sig: int | None) -> sp.Rational:
        """Half a unit of the last printed digit, or of the ``sig``-th significant digit."""
        if sig is None:
            return sp.Rational(1, 2) * sp.Rational(10) ** (-self.decimals)
        if self.value == 0:
            return sp.Rational(1, 2) * sp.Rational(10) ** (-self.decimals) if self.has_point else sp.S.Zero
        e = magnitude(self.value)
        return sp.Rational(1, 2) * sp.Rational(10) ** (e - sig + 1)


def magnitude(x: sp.Rational) -> int:
    """floor(log10 |x|) computed exactly for a nonzero rational."""
    x = abs(Fraction(int(x.p), int(x.q)))
    e = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    return e


def _anatomy(t: str) -> tuple[str, str, str, bool]:
    """The parts of an unsigned printed number: its mantissa (grouping removed), how its exponent is written ("e"
    or "E", "10^" for a scientific factor, "" for none), the exponent as printed, and whether it is a percentage.
    ``1,234.5e−3`` → (``1234.5``, ``e``, ``−3``, False); ``1.5 \\times 10^{-3}`` → (``1.5``, ``10^``, ``-3``,
    False); ``35\\%`` → (``35``, ``""``, ``""``, True)."""
    percent = t.endswith("%")
    body = t.removesuffix("%").removesuffix("\\")
    sci = _SCIENTIFIC.search(body)
    if sci:
        return _GROUP.sub("", body[:sci.start()]), "10^", sci.group(1), percent
    body, marker, exponent = (re.split(r"([eE])", body, maxsplit=1) + ["", ""])[:3]
    return _GROUP.sub("", body), marker, exponent, percent


def _mantissa(text: str) -> str:
    """The digits and decimal point of a printed number: no sign, grouping, exponent, scientific factor or %."""
    return _anatomy(text.strip().lstrip("+-\u2212"))[0]


def canonical(text: str) -> str:
    """A printed number as a key, without its decoration (its value and printed digits kept): ``−0.5`` → ``-0.5``,
    ``+3`` → ``3``, ``4,096`` and ``4 096`` → ``4096``, ``1.5×10^{-3}`` → ``1.5e-3``, ``2.5e−3`` → ``2.5e-3``,
    ``12.5\\%`` → ``12.5%``. Text that is no printed number is returned with only its minus signs made ASCII."""
    t = text.strip().replace("\u2212", "-")
    sign, t = ("-", t[1:]) if t.startswith("-") else ("", t.removeprefix("+"))
    mantissa, marker, exponent, percent = _anatomy(t)
    return f"{sign}{mantissa}{'e' if marker == '10^' else marker}{exponent}" + ("%" if percent else "")


def written_like(plain: str, printed: PrintedNumber) -> str:
    """A plain decimal (``49152``, ``-0.75``, ``8e-3``) written in the notation of ``printed``: its thousands
    separator (``49,152`` for a printed ``49,052``) and its scientific factor (``8 × 10^{-3}`` for a printed
    ``8 × 10^{-2}``); anything else as it is. Used to show the correct value the way the page prints numbers."""
    m = re.fullmatch(r"(-?)(\d+)(\.\d+)?(?:e([-+]?\d+))?", plain)
    if m is None:
        return plain
    sign, whole, frac, exp = m.groups()
    t = printed.text.strip()
    sci = _SCIENTIFIC.search(t.removesuffix("%").removesuffix("\\"))
    if sci and exp is not None:
        factor = re.sub(r"[-+\u2212]?\d+(?=\s*\}?\s*$)", str(int(exp)), sci.group(0))
        return f"{sign}{whole}{frac or ''}{factor}"
    sep = next((g.group(1) for g in [re.search(rf"\d({SEPARATOR})\d{{3}}", t)] if g), None)
    if sep and exp is None and len(whole) > 3:
        whole = f"{int(whole):,}".replace(",", sep)
    return f"{sign}{whole}{frac or ''}" + (f"e{exp}" if exp is not None else "")


def is_scientific(printed: PrintedNumber) -> bool:
    """Whether a printed number is written with an exponent or a scientific factor (``1e-5``, ``8 × 10^{-2}``)."""
    return bool(re.search(r"[eE]|10\s*\^", printed.text))


# above this many characters, or beyond this decimal exponent, a printed number has no value here: it is decided
# from its text, never built (1e99999999 would take 41 MB and minutes)
LIMIT = 1000


def read_number(text: str) -> PrintedNumber | None:
    """Read a printed number exactly (the forms of the module docstring); None when ``text`` is not one, or is
    beyond :data:`LIMIT` characters or in exponent.

    >>> read_number("12,832").value, read_number("−2.5e−3").value, read_number("12.5%").half_unit(None)
    (12832, -1/400, 1/2000)
    """
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t or len(t) > LIMIT:
        return None
    sign = ""
    if t[0] in "+-\u2212":
        sign, t = ("-" if t[0] != "+" else ""), t[1:]
    m = grammar.compiled("NUMBER").fullmatch(t)
    if m is None and not _NUMPY_WHOLE.fullmatch(t):
        return None
    body, _, printed_exponent, percent = _anatomy(t)
    exponent = int(printed_exponent.replace("\u2212", "-") or 0)
    if abs(exponent) > LIMIT:
        return None
    has_point = "." in body
    decimals = len(body.split(".")[1]) if has_point else 0
    f = Fraction(sign + body.rstrip(".")) * Fraction(10) ** exponent
    decimals -= exponent
    if percent:
        f, decimals = f / 100, decimals + 2
    return PrintedNumber(text.strip(), sp.Rational(f.numerator, f.denominator), decimals, has_point, percent)
