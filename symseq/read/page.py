"""Numeric tokens of a handout's text: every number, with its line, column and printed form.

One scanner reads plain text, Markdown and LaTeX alike (the handouts mix them:
``\\(0.2+\\sin 3\\approx0.341\\)``, ``$w\\simeq 0.330238$``, tab-separated
tables). It never evaluates the text. A token is one of:

* ``number``: a printed number as the grammar's ``NUMBER`` terminal defines it (``printed.lark``, the one
  definition the parser and :func:`symseq.read.number.read_number` share), signed with ASCII ``-`` or Unicode
  ``−`` when the sign is not a subtraction (``-0.579``, ``4,096``, ``1 000``, ``1e-5`` also before a full stop,
  ``2.5e−3``, ``1.5 \\times 10^{-3}``, ``10^{-5}``, ``5%``), or a dotted ``3.4.1``; inside an open bracket a
  comma separates entries (:func:`in_list`);
* ``fraction``: ``1/4``, ``\\frac{1}{2}``, ``\\tfrac12``;
* ``root``: ``√2``, ``\\sqrt{3}``, ``1/\\sqrt{2}``, ``0.2√2``;
* ``vector``: a bracketed list whose entries are all numbers, one token
  (``[0.8,0.4]``, ``(0.2,0.9,0.4,1,-0.2)``, ``(0.789,\\;0.204,\\;0.240)``); an entry of a vector
  or matrix may also be a natural logarithm of an integer, times a number or root
  (``[\\log2,0,0]``, ``[\\sqrt2\\log2,0]``);
* ``matrix``: a LaTeX ``bmatrix``/``pmatrix``/``array`` whose cells are all numbers;
* ``shape``: ``7×5``, ``7\\times5``, ``16x16``.

Digits in a subscript (``h_{t-1}``, ``W_{x,00}``, ``\\sum_{t=0}``) are tokens
with ``script="sub"``; a simple superscript (``^2``, ``^{(0)}``, ``^{[2]}``)
has ``script="sup"``; the digits of an identifier (``W2``) have
``script="ident"``; those of a URL ``script="url"``. The structural
classification (:mod:`symseq.audit.structure`) reads these marks.

Each token has a canonical key (:attr:`Token.key`) so that a claim's printed
string, scanned by the same function, can be found in the text whatever the
LaTeX spacing: ``(0.789,\\;0.204,\\;0.240)`` and ``(0.789,0.204,0.240)`` have
the same key.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

import sympy as sp

from . import grammar
from .number import SEPARATOR, canonical, read_number

MINUS = "\u2212"
_SPACING = re.compile(r"\\[,;:! ]|\\quad|\\qquad|~|\\thinspace|\\enspace")
# a number as the grammar defines it (printed.lark's NUMBER), or a dotted section number (3.4.1), which is no number
_NUMBER = re.compile(r"(?P<dotted>\d+(?:\.\d+){2,}(?![\d]))|(?P<num>" + grammar.terminal("NUMBER") + ")")
# a size of a shape is no group of a grouped number (256 × 1 024 is a product, not a shape)
_NOT_GROUPED = rf"(?!{SEPARATOR}\d{{3}}(?!\d))"
_PLAIN = re.compile(r"[-+]?[\d.]+")
# what a root may be taken of: an integer or a decimal (√2, √0.1325)
_RADICAND = r"\d+(?:\.\d+)?"
_LOG_ENTRY = re.compile(r"([-+]?)(\d+(?:\.\d+)?)?(?:(?:√|\\sqrt)(\d+))?\\(?:log|ln)\(?(\d+)\)?")
_URL = re.compile(r"https?://\S+|www\.\S+")
_CALLED_NAME = re.compile(r"(?<![\\\w])[A-Za-z_]\w*[A-Za-z0-9]$")  # clip_grad_norm in clip_grad_norm_(…)
_CMD = re.compile(r"\\[A-Za-z]+")
_ENV = re.compile(r"\\begin\{(bmatrix|pmatrix|matrix|vmatrix|Bmatrix|array|smallmatrix)\}(\{[^{}]*\})?")
_FRAC_CMD = ("\\frac", "\\tfrac", "\\dfrac")
_OPEN = {"(": ")", "[": "]"}
_SIGN_OK_AFTER = set("([{,=&|;:<>≈~\t≤≥*×/+`") | {"\u2248", "\u2243", "\u2264", "\u2265", "\u2192", "\u2013", "\u2014", "-", "\u2212"}
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14, "sixteen": 16, "twenty": 20,
}
_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


@dataclass
class Token:
    """One numeric token of a text (or of a claim's printed string).

    Attributes:
        line: line number, from 1 (0 for a claim's printed string).
        start, end: columns of the token in its line (end exclusive).
        text: the token as printed.
        kind: number, fraction, root, vector, matrix or shape.
        entries: canonical entry strings (one for a scalar), row-major.
        shape: () for a scalar, (n,) for a vector, (rows, cols) for a matrix, (k,) of sizes for a shape.
        script: "" for a quantity position; sub, sup, ident or url (see the module docstring).
        tier: "hard" or "soft" for a number that may not be a quantity, "" for a quantity position (set by
            :func:`symseq.audit.structure.classify`).
        rule: the name of the structural rule that set ``tier`` ("heading", "code", ...), "" with no tier.
        attribution: the audit's verdict on the token and what accounts for it (a claim, an input, a statement of
            the page's arithmetic, a structural rule: :class:`symseq.audit.attribution.Attribution`); None until
            the audit attributes it.
        context: the text around the token, as reports quote it.
    """

    line: int
    start: int
    end: int
    text: str
    kind: str
    entries: tuple
    shape: tuple = ()
    script: str = ""
    # filled by the audit
    tier: str = ""  # "hard" or "soft" for a structural number (see symseq.audit.structure)
    rule: str = ""  # the structural rule that set tier
    attribution: object = None  # symseq.audit.attribution.Attribution, once audited
    context: str = ""
    claim: object = field(default=None, repr=False)

    @functools.cached_property
    def key(self) -> str:
        """Canonical form for matching: kind and entries (a vector of one entry never occurs); computed once, as a
        token's kind and entries do not change."""
        if self.kind in ("number", "fraction", "root"):
            return self.entries[0]
        if self.kind == "shape":
            return "×".join(self.entries)
        if self.kind == "matrix":
            r, c = self.shape
            return "[" + ";".join(",".join(self.entries[i * c:(i + 1) * c]) for i in range(r)) + "]"
        return "(" + ",".join(self.entries) + ")"

    @property
    def is_scalar(self) -> bool:
        return self.kind in ("number", "fraction", "root")


@dataclass
class WordNumber:
    """A small integer written as a word ("seven"), usable by a claim that prints it as a numeral."""

    line: int
    start: int
    end: int
    text: str
    value: int


# the largest decimal exponent (1e1000, 10^{-1000}) and the most characters of an entry the audit gives a value;
# beyond them a number is a token without a value (it equals no claim's value and is no edit of one), decided
# from its printed exponent and length, never built (1e99999999 would take 41 MB and minutes)
VALUE_LIMIT = 1000


def in_value_range(entry: str) -> bool:
    """Whether a canonical entry is short enough, and its exponent small enough, to be given an exact value.

    ``1e-5`` and ``10^{300}`` are; ``1e99999999`` (decided from the exponent as printed, without building the
    number) and a run of more than :data:`VALUE_LIMIT` digits are not.
    """
    if len(entry) > VALUE_LIMIT:
        return False
    m = re.search(r"e([-+]?)0*(\d+)$", entry.rstrip("%"))
    return m is None or len(m.group(2)) <= len(str(VALUE_LIMIT)) and int(m.group(2)) <= VALUE_LIMIT


@functools.lru_cache(maxsize=4096)
def number_value(entry: str):
    """The exact value of a canonical entry (a SymPy number), or None for a form that has no single value, or one
    out of range (:func:`in_value_range`: its exponent beyond ±:data:`VALUE_LIMIT`, or longer than that)."""
    if not in_value_range(entry):
        return None
    n = read_number(entry)  # the one reader of a printed number
    if n is not None:
        return n.value
    from ..errors import ClaimError
    from .evaluate import value
    from .syntax import parse

    try:  # a fraction, a root or a logarithm (1/4, 0.2√2, 1/√2, √2\log2), read by the grammar
        v = value(parse(entry))
    except ClaimError:
        return None
    return v if isinstance(v, sp.Expr) else None


# ---------------------------------------------------------------------------
# the scanner
# ---------------------------------------------------------------------------


def _group(s: str, i: int, limit: int | None = None) -> tuple[str | None, int]:
    """The argument starting at ``s[i]``: a balanced ``{...}`` group, a command, or one character. With
    ``limit``, a group longer than ``limit`` characters is (None, its end): no argument a number is read from."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        return "", i
    if s[i] == "{" and (i == 0 or s[i - 1] != "\\"):
        j = _closing(s, i, "{", "}")
        end = j if j >= 0 else len(s)
        if limit is not None and end - i - 1 > limit:
            return None, min(end + 1, len(s))
        return (s[i + 1:j], j + 1) if j >= 0 else (s[i + 1:], len(s))
    if s[i] == "{":  # an escaped brace \{ is not counted: the group closes where the braces after it balance
        depth, j = 0, i
        while j < len(s):
            if s[j] == "{" and s[j - 1] != "\\":
                depth += 1
            elif s[j] == "}" and s[j - 1] != "\\":
                depth -= 1
                if depth == 0:
                    return s[i + 1:j], j + 1
            j += 1
        return s[i + 1:], len(s)
    m = _CMD.match(s, i)
    if m:
        return m.group(0), m.end()
    return s[i], i + 1


def _strip_spacing(text: str) -> str:
    t = _SPACING.sub(" ", text)
    for cmd in ("\\mathrm", "\\text", "\\mathbf", "\\displaystyle"):
        t = t.replace(cmd, "")
    return t.replace("{", "").replace("}", "").strip()


def _entry(text: str) -> str | None:
    """Canonical form of one cell or vector entry when it is a plain number, fraction or root; else None."""
    t = _strip_spacing(text).replace(" ", "")
    if not t:
        return None
    t = t.replace(MINUS, "-")
    if _PLAIN.fullmatch(t) and read_number(t) is not None:  # an entry is a plain decimal: 1e-05 entries are apart
        return canonical(t)
    m = re.fullmatch(r"([-+]?)\\[td]?frac(\d)(\d)", t) or re.fullmatch(r"([-+]?)(\d+)/(\d+)", t)
    if m:
        return f"{'-' if m.group(1) == '-' else ''}{m.group(2)}/{m.group(3)}"
    m = re.fullmatch(r"([-+]?)\\[td]?frac(\d+)(\d+)", text.replace(" ", "").replace("{", "").replace("}", ""))
    if m and "{" in text:
        return f"{'-' if m.group(1) == '-' else ''}{m.group(2)}/{m.group(3)}"
    m = re.fullmatch(r"([-+]?[\d.]*)(/?)(?:√|\\sqrt)(" + _RADICAND + ")", t)
    if m:
        return f"{m.group(1).lstrip('+')}{m.group(2)}√{m.group(3)}"
    m = re.fullmatch(r"([-+]?\d+(?:,\d{3})+)", t)
    if m:
        return canonical(t)
    m = _LOG_ENTRY.fullmatch(t)
    if m:  # \log2, 2\ln 3, \sqrt2\log2: a (root times a) logarithm of an integer, natural as SymPy's log
        sign, coef, root, arg = m.groups()
        return f"{'-' if sign == '-' else ''}{canonical(coef) if coef else ''}" \
               f"{'√' + root if root else ''}\\log{arg}"
    return None


# inline mathematics: $$…$$, $…$, \(…\), \[…\] on one line (the group is the formula)
MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]")


def math_bodies(line: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each formula written inline on ``line``: ``$…$``, ``$$…$$``, ``\\(…\\)``,
    ``\\[…\\]`` (the text between its delimiters)."""
    out = []
    for m in MATH.finditer(line):
        g = next(k for k in range(1, 5) if m.group(k) is not None)
        out.append((m.start(g), m.end(g), m.group(g)))
    return out


def math_spans(line: str) -> list[tuple[int, int]]:
    """The columns (start, end) of the formulas written inline on ``line`` (:func:`math_bodies`)."""
    return [(a, b) for a, b, _ in math_bodies(line)]


def split_top(text: str, seps) -> list[str]:
    """``text`` cut at each separator of ``seps`` (strings; a string of one-character separators is one too) that
    stands outside brackets and braces: ``split_top("a,[1,2];b", ",;")`` is ``["a", "[1,2]", "b"]``."""
    parts, depth, cur, i = [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if depth == 0:
            hit = next((sep for sep in seps if text.startswith(sep, i)), None)
            if hit:
                parts.append(cur)
                cur = ""
                i += len(hit)
                continue
        cur += ch
        i += 1
    parts.append(cur)
    return parts


def _matching(s: str, i: int, open_ch: str) -> int:
    """Index of the bracket closing ``s[i]`` on this line, or -1."""
    j = _closing(s, i, "([", ")]")
    return j if j >= 0 and s[j] == _OPEN[open_ch] else -1


def _closing(s: str, i: int, opens: str, closes: str) -> int:
    """The position of the bracket (one of ``closes``) that brings the depth counted from ``s[i]`` (an opening
    bracket, counted even when escaped) back to zero, or -1; brackets escaped by a backslash after ``s[i]`` are
    not counted. Read from a table built once per text (:func:`_depth_drops`), so a line of many brackets is
    scanned in linear time."""
    drop = _depth_drops(s, opens, closes)[i + 1]
    return drop - 1 if drop >= 0 else -1


@functools.lru_cache(maxsize=8)
def _depth_drops(s: str, opens: str, closes: str) -> list[int]:
    """For each k, the first m > k where the running count of unescaped opening minus closing brackets before m
    falls one below its value at k (-1 when it never does): the depth counted from an opening bracket at k - 1
    returns to zero at the bracket m - 1."""
    level, run = [0] * (len(s) + 1), 0
    for p, c in enumerate(s):
        if (c in opens or c in closes) and not (p > 0 and s[p - 1] == "\\"):
            run += 1 if c in opens else -1
        level[p + 1] = run
    out, nearest = [-1] * (len(s) + 2), {}
    for k in range(len(s), -1, -1):
        out[k] = nearest.get(level[k] - 1, -1)
        nearest[level[k]] = k
    return out


SPAN_LIMIT = 4096  # the most characters a bracketed vector, a LaTeX matrix or a \frac/\sqrt argument may span
_SCRIPT_DEPTH = 8  # superscript groups nested deeper than this are read as labels, not scanned again
_LOOKBACK = 256  # how far back a test of the text before a position reads (a command name, an identifier)
_CMD_BEFORE = re.compile(r"\\([A-Za-z]+)\s*$")
_BEGIN_BEFORE = re.compile(r"\\begin\{\w+\}(?:\{[^{}]*\})?$")
_HYPHENATED_BEFORE = re.compile(r"[A-Za-z]{2,}-$")
_CMD_HYPHEN_BEFORE = re.compile(r"\\[A-Za-z]+-$")
_SYMBOL_TIMES_BEFORE = re.compile(r"(?<![A-Za-z\\])([A-Za-z])\s*(?:\\times|×)\s*$")


# patterns read at a position of a line (pattern.match(s, i): the rest of a long line is never copied)
_ESCAPED_BRACKET_NUMBER = re.compile(r"\\\[\s*[-\u2212]?[\d.]")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")
_ROOT_SIGN = re.compile(r"√\s*(" + _RADICAND + ")")
_DIGITS = re.compile(r"\d+")
_DECIMAL_POWER = re.compile(r"\d+\.\d+(?![\d.])")  # the exponent of e^0.577, written without braces
_FILE_NAME = re.compile(r"\d+_[A-Za-z]{2,}")
# a name with digits in it: W2, fp16, dh3dh2 (every digit run of the name is part of it)
_IDENT_DIGITS = re.compile(r"[A-Za-z]+\d+(?:[A-Za-z]+\d*)*")
# the rest of a name after an underscore, when it holds digits: the t2 of h_t2, the hh2 of W_hh2
_NAME_PART = re.compile(r"[A-Za-z0-9]+(?![\d.])")
_NAME_TAIL = re.compile(r"[A-Za-z]+\d+(?:[A-Za-z]+\d*)*(?![\d.])")
_LETTERS = re.compile(r"[^\W\d_]+")
_TIMES_SIZE = re.compile(r"\s*(?:\\times|×|x)\s*(\d+)(?![\d.])" + _NOT_GROUPED)
_MORE_SIZE = re.compile(r"\s*(?:\\times|×)\s*(\d+)(?![\d.])" + _NOT_GROUPED)
_TIMES = re.compile(r"\s*(?:\\times|×)")
_TIMES_SYMBOL = re.compile(r"\s*(?:\\times|×)\s*([A-Za-z](?:_\{?[A-Za-z]+\}?)?)(?![A-Za-z(])")
_OVER = re.compile(r"/(\d+)(?![\d./,])")
_TIMES_ROOT = re.compile(r"(/?)\s*(?:√|\\sqrt)\s*\{?\s*(" + _RADICAND + r")\s*\}?")


def _next_visible(s: str, i: int, n: int) -> str:
    """The first ``n`` characters of ``s[i:]`` after its leading white space (without copying the rest)."""
    while i < len(s) and s[i].isspace():
        i += 1
    return s[i:i + n]


def _find_after(s: str, sub: str, start: int) -> int:
    """``s.find(sub, start)``, from a table of the occurrences built once per text (many unclosed
    ``\\begin{bmatrix}`` on one line must not each search the rest of it)."""
    where = _occurrences(s, sub)
    k = bisect.bisect_left(where, start)
    return where[k] if k < len(where) else -1


@functools.lru_cache(maxsize=8)
def _occurrences(s: str, sub: str) -> list[int]:
    out, k = [], s.find(sub)
    while k >= 0:
        out.append(k)
        k = s.find(sub, k + 1)
    return out


def _tail(pattern: re.Pattern, s: str, i: int):
    """``pattern`` (anchored with ``$``) searched in the text just before ``s[i]``: at most :data:`_LOOKBACK`
    characters, so that testing every position of a long line stays linear."""
    return pattern.search(s, max(0, i - _LOOKBACK), i)


def _last_visible(s: str, i: int) -> str:
    """The last character before ``s[i]`` that is not white space ("" when there is none)."""
    j = i
    while j > 0 and s[j - 1].isspace():
        j -= 1
    return s[j - 1] if j > 0 else ""


def _sign_allowed(s: str, i: int) -> bool:
    """Whether a '-' at ``s[i]`` is a sign (not a subtraction)."""
    if i > 0 and s[i - 1].isspace():
        return True  # "gives −0.99" (a subtraction is spaced on both sides or on neither: "x - 2", "T-1")
    j = i - 1
    if j < 0:
        return True
    c = s[j]
    if c in _SIGN_OK_AFTER or c.isspace():
        return True
    if c == "(" or c == "{":
        return True
    m = _tail(_CMD_BEFORE, s, i)
    if m and m.group(1) not in ("right", "rbrace", "rbrack"):
        return True  # \approx-1.09, \simeq -0.5
    if s[max(0, j - 1):j + 1].endswith(("\\(", "\\[", "$")):
        return True
    if _tail(_BEGIN_BEFORE, s, i):
        return True  # the first cell of an array or matrix: \begin{array}{cc}-2
    return False


class _Scanner:
    def __init__(self, line: str, lineno: int, *, offset: int = 0, script: str = "", depth: int = 0):
        self.s = line
        self.lineno = lineno
        self.offset = offset
        self.script = script
        self.depth = depth  # superscript groups this scanner is nested in
        self.out: list[Token] = []

    def emit(self, start, end, text, kind, entries, shape=(), script=None):
        self.out.append(Token(self.lineno, start + self.offset, end + self.offset, text, kind, tuple(entries),
                              shape, self.script if script is None else script))

    def sub(self, text: str, start: int, script: str):
        """Scan ``text`` (a part of the line starting at column ``start``) into this scanner's tokens."""
        inner = _Scanner(text, self.lineno, offset=self.offset + start, script=script or self.script,
                         depth=self.depth + 1)
        inner.run()
        self.out.extend(inner.out)

    def run(self) -> list[Token]:
        s, i = self.s, 0
        urls = {m.start(): (m.start(), m.end()) for m in _URL.finditer(s)}
        while i < len(s):
            url = urls.get(i)
            if url:
                for m in re.finditer(r"\d+", s[url[0]:url[1]]):
                    self.emit(url[0] + m.start(), url[0] + m.end(), m.group(0), "number", [m.group(0)], script="url")
                i = url[1]
                continue
            c = s[i]
            if c == "_" and s[i + 1:i + 2] == "(" and _tail(_CALLED_NAME, s, i):
                i += 1  # a code name ending in an underscore, called: clip_grad_norm_(…, max_norm=1.0)
                continue
            if c in "_^":
                i = self.script_group(i)
                continue
            if c == "\\" and s[i + 1:i + 2] == "[" and _ESCAPED_BRACKET_NUMBER.match(s, i):
                j = self.vector(i + 1)  # Markdown's escaped bracket: \[0.84, 0.54] in a table cell
                if j and s[j - 2:j] != "\\]":
                    i = j
                    continue
            if c == "\\" and s[i + 1:i + 2] == "_" and i > 0 and s[i - 1].isalnum():
                m = _NAME_PART.match(s, i + 2)  # h\_t2, x\_2: a name with an escaped underscore in LaTeX text
                if m:
                    for d in _DIGITS.finditer(s, m.start(), m.end()):
                        self.emit(d.start(), d.end(), d.group(0), "number", [d.group(0)], script="ident")
                    i = m.end()
                    continue
            if c == "\\":
                i = self.command(i)
                continue
            if c == "[" and i > 0 and (s[i - 1].isalnum() or s[i - 1] in "_)]") and _INDEX.match(s, i):
                m = _INDEX.match(s, i)  # final[0], x[3]: an index into a name
                self.emit(i + 1, m.end() - 1, m.group(1), "number", [m.group(1)], script="sub")
                i = m.end()
                continue
            if c in "([" and not (i > 0 and s[i - 1] == "\\"):
                j = self.vector(i)
                if j:
                    i = j
                    continue
                i += 1
                continue
            if c == "√":
                m = _ROOT_SIGN.match(s, i)
                if m:
                    self.emit(i, m.end(), m.group(0), "root", [f"√{m.group(1)}"])
                    i = m.end()
                    continue
                i += 1
                continue
            if c.isdigit() and _tail(_HYPHENATED_BEFORE, s, i) and not _tail(_CMD_HYPHEN_BEFORE, s, i):
                m = _DIGITS.match(s, i)  # a hyphenated name such as nn-llm-unit-2
                self.emit(i, m.end(), m.group(0), "number", [m.group(0)], script="ident")
                i = m.end()
                continue
            if c.isdigit() and (i == 0 or not s[i - 1].isalnum()) and _FILE_NAME.match(s, i):
                m = _DIGITS.match(s, i)  # a file or identifier name such as 11_attention.py
                self.emit(i, m.end(), m.group(0), "number", [m.group(0)], script="ident")
                i = m.end()
                continue
            if c.isdigit() or (c == "." and i + 1 < len(s) and s[i + 1].isdigit()) or (
                    c in "-+" + MINUS and i + 1 < len(s) and (s[i + 1].isdigit() or s[i + 1] == ".")
                    and _sign_allowed(s, i)):
                i = self.number(i)
                continue
            if c.isalpha():
                m = _IDENT_DIGITS.match(s, i)
                if m and (i == 0 or not s[i - 1].isdigit()):
                    # an identifier such as W2, fp16 or dh3dh2 (not 2w or 16x16): each of its digit runs
                    for d in _DIGITS.finditer(s, i, m.end()):
                        self.emit(d.start(), d.end(), d.group(0), "number", [d.group(0)], script="ident")
                    i = m.end()
                    continue
                m = _LETTERS.match(s, i)
                i = m.end() if m else i + 1
                continue
            i += 1
        return self.out

    # -- pieces
    def script_group(self, i: int) -> int:
        s = self.s
        kind = "sub" if s[i] == "_" else "sup"
        j = i + 1
        if kind == "sup" and (m := _DECIMAL_POWER.match(s, j)):  # e^0.577: a decimal exponent is a quantity
            self.emit(j, m.end(), m.group(0), "number", [m.group(0)])
            return m.end()
        if j < len(s) and s[j].isdigit():  # h_63, T^2: a run of digits
            m = _DIGITS.match(s, j)
            self.emit(j, m.end(), m.group(0), "number", [m.group(0)], script=kind)
            return m.end()
        named = kind == "sub" and i > 0 and (s[i - 1].isalnum() or s[i - 1] == "_")
        tail = _NAME_TAIL.match(s, j) if named else None
        if tail:  # h_t2, W_hh2: the digits of a name written with an underscore
            for d in _DIGITS.finditer(s, j, tail.end()):
                self.emit(d.start(), d.end(), d.group(0), "number", [d.group(0)], script="ident")
            return tail.end()
        if j < len(s) and s[j] in "([" and _matching(s, j, s[j]) > 0:  # ^[2], ^(0) written without braces
            end = _matching(s, j, s[j]) + 1
            body, start = s[j:end], j
        else:
            body, end = _group(s, j)
            start = j + 1 if j < len(s) and s[j] == "{" else j
        if kind == "sub":
            for m in re.finditer(r"\d+", body):
                self.emit(start + m.start(), start + m.end(), m.group(0), "number", [m.group(0)], script="sub")
            return end
        if self.depth >= _SCRIPT_DEPTH or _simple_script(body):  # (superscripts nested deeper are labels too)
            for m in re.finditer(r"\d+", body):
                self.emit(start + m.start(), start + m.end(), m.group(0), "number", [m.group(0)], script="sup")
            return end
        self.sub(body, start, "")
        return end

    def command(self, i: int) -> int:
        s = self.s
        m = _CMD.match(s, i)
        if not m:
            return i + 2 if i + 1 < len(s) else i + 1  # \( \[ \, \\ ...
        name = m.group(0)
        if name in _FRAC_CMD:
            a, j = _group(s, m.end(), SPAN_LIMIT)
            b, k = _group(s, j, SPAN_LIMIT) if a is not None else (None, j)
            if b is None:
                return m.end()
            ea, eb = _entry(a), _entry(b)
            if ea is not None and eb is not None and re.fullmatch(r"\d+", ea):
                if re.fullmatch(r"\d+", eb):
                    self.emit(i, k, s[i:k], "fraction", [f"{ea}/{eb}"])
                    return k
                if re.fullmatch(r"√\d+", eb):
                    self.emit(i, k, s[i:k], "root", [f"{ea}/{eb}"])
                    return k
            return m.end()
        if name == "\\sqrt":
            a, j = _group(s, m.end(), SPAN_LIMIT)
            if a is not None and re.fullmatch(r"\s*" + _RADICAND + r"\s*", a):
                self.emit(i, j, s[i:j], "root", [f"√{a.strip()}"])
                return j
            return m.end()
        if name == "\\begin":
            env = _ENV.match(s, i)
            if env:
                return self.matrix(i, env)
            return m.end()
        if name in ("\\left", "\\bigl", "\\Bigl", "\\biggl", "\\big", "\\Big"):
            j = m.end()
            if j < len(s) and s[j] in "([":
                k = self.vector(j, lead=i)
                if k:
                    return k
            return j
        if name == "\\lbrack":
            return m.end()
        return m.end()

    def matrix(self, i: int, env) -> int:
        s = self.s
        name = env.group(1)
        end_tag = f"\\end{{{name}}}"
        k = _find_after(s, end_tag, env.end())
        if k < 0 or k - i > SPAN_LIMIT:
            return env.end()
        body = s[env.end():k]
        rows = [r for r in re.split(r"\\\\", body) if r.strip()]
        grid = [[_entry(c) for c in r.split("&")] for r in rows]
        widths = {len(r) for r in grid}
        if grid and len(widths) == 1 and all(e is not None for r in grid for e in r):
            end = k + len(end_tag)
            self.emit(i, end, s[i:end], "matrix", [e for r in grid for e in r], (len(grid), widths.pop()))
            return end
        return env.end()

    def vector(self, i: int, lead: int | None = None) -> int | None:
        s = self.s
        j = _matching(s, i, s[i])
        if j < 0 or j - i > SPAN_LIMIT:
            return None
        inner = s[i + 1:j]
        if "," not in inner or "[" in inner or "(" in inner and "\\l" not in inner:
            return None  # one entry, or an entry that is no number (only \log(2) or \ln(3) holds a parenthesis)
        if re.search(r"\d,\d{3}/\d", inner):
            return None  # counts with thousands separators, such as (1,943/2,023/1,915)
        if inner.rstrip().endswith("\\right") or inner.rstrip().endswith("\\bigr") or inner.rstrip().endswith(
                "\\Bigr"):
            inner = re.sub(r"\\(right|bigr|Bigr)\s*$", "", inner.rstrip())
        clean = _SPACING.sub(" ", inner)
        sep = "|" if "|" in clean and "," in clean else ""
        items = [x for part in (split_top(clean, "|;") if sep else [clean]) for x in split_top(part, ",")]
        if len(items) < 2 or any(not x.strip() for x in items):
            return None
        entries = [_entry(x) for x in items]
        if any(e is None for e in entries):
            return None
        start = i if lead is None else lead
        self.emit(start, j + 1, s[start:j + 1], "vector", entries, (len(entries),))
        return j + 1

    def number(self, i: int) -> int:
        s = self.s
        sign = ""
        j = i
        if s[j] in "-+" + MINUS:
            sign = "-" if s[j] != "+" else ""
            j += 1
        m = _NUMBER.match(s, j)
        if not m:
            return j + 1
        text_end = m.end()
        if m.group("dotted"):
            self.emit(i, text_end, s[i:text_end], "number", [sign + m.group(0)])
            return text_end
        num = m.group("num")
        if "," in num and in_list(s, j, text_end):
            num = num.split(",")[0]  # inside brackets a comma separates entries: [1,234] is two numbers
            text_end = j + len(num)
        k = text_end
        # 10^{-5}
        if num == "10" and s[k:k + 1] == "^":
            body, e = _group(s, k + 1)
            if re.fullmatch(r"\s*[-+\u2212]?\d+\s*", body):
                exp = canonical(body.strip())
                self.emit(i, e, s[i:e], "number", [f"{sign}1e{exp}"])
                return e
        # a percentage
        if s[k:k + 1] == "%" and not (k > 0 and s[k - 1] == "\\"):
            self.emit(i, k + 1, s[i:k + 1], "number", [sign + canonical(num) + "%"])
            return k + 1
        if s[k:k + 2] == "\\%":
            self.emit(i, k + 2, s[i:k + 2], "number", [sign + canonical(num) + "%"])
            return k + 2
        # a × b shapes (integers)
        shape = _TIMES_SIZE.match(s, k)
        in_sum = _last_visible(s, i) in ("+", "-", MINUS)  # 1×1.131+1×0: a term of a sum is a product
        if shape and not sign and not in_sum and re.fullmatch(r"\d+", num) and (
                s[k:k + 1] != "x" or shape.group(0)[0] == "x"):
            sizes, e = [num, shape.group(1)], shape.end()
            while True:
                more = _MORE_SIZE.match(s, e)
                if not more:
                    break
                sizes.append(more.group(1))
                e = more.end()
            ahead = _next_visible(s, e, 2)
            after = ahead[:1]
            if after not in ("+", "=", "-", MINUS) or after == "=" and ahead == "=\\":
                self.emit(i, e, s[i:e], "shape", sizes, (len(sizes),))
                return e
        # D × 1: a shape whose first size is a symbol
        lead = _tail(_SYMBOL_TIMES_BEFORE, s, i)
        if lead and not sign and re.fullmatch(r"\d+", num) and not _TIMES.match(s, k):
            a = lead.start(1)
            self.emit(a, k, s[a:k], "shape", [lead.group(1), num], (2,))
            return k
        # a × D: a shape with a symbolic size (1\times D, 9 \times d_k)
        sym = _TIMES_SYMBOL.match(s, k)
        if sym and not sign and re.fullmatch(r"\d+", num):
            e = sym.end()
            size = re.sub(r"[{}]", "", sym.group(1))
            self.emit(i, e, s[i:e], "shape", [num, size], (2,))
            return e
        # a/b fractions, a/√b
        frac = _OVER.match(s, k)
        if frac and re.fullmatch(r"\d+", num) and not (i > 0 and s[i - 1] == "/"):
            e = frac.end()
            self.emit(i, e, s[i:e], "fraction", [f"{sign}{num}/{frac.group(1)}"])
            return e
        root = _TIMES_ROOT.match(s, k)
        if root and not (root.group(1) == "" and s[k:k + 1] == " "):
            e = root.end()
            self.emit(i, e, s[i:e], "root", [f"{sign}{canonical(num)}{root.group(1)}√{root.group(2)}"])
            return e
        self.emit(i, k, s[i:k], "number", [sign + canonical(num)])
        return k


def _simple_script(body: str) -> bool:
    """A superscript that labels or raises to an integer power (^2, ^{-1}, ^{(0)}, ^{[2]}, ^{T-1}, ^\\top), or a
    bracketed label transposed or primed (^{(2)\\top}, ^{(1)'})."""
    b = body.strip()
    if b in ("\\top", "\\mathsf{T}", "\\prime", "*", "'", "\\ast"):
        return True
    if re.search(r"\\times|×|/|\\frac|\\sqrt|\\lfloor|\d\.\d", b):
        return False
    b = re.sub(r"\\(ell|top|prime|mathrm\{[^{}]*\}|mathsf\{[^{}]*\}|text\{[^{}]*\})", "x", b)
    return bool(re.fullmatch(r"[-+\u2212]?\s*[(\[]?\s*[-+\u2212]?[\dA-Za-z ,]*(?:[-+\u2212]\s*[\dA-Za-z ]+)?\s*[)\]]?"
                             r"(?:(?<=[)\]])\s*(?:x|T|'|\*))?", b))


_THOUSANDS_RATIO = re.compile(r"\s*/\s*[1-9]\d{0,2},\d{3}")


def in_list(s: str, start: int, end: int) -> bool:
    """Whether the digits ``s[start:end]``, joined by a comma, stand inside an open bracket of their line, where
    a comma separates entries (``[1,234]``, ``(3,4)``), rather than group thousands (``= 12,832``); counts written
    as a ratio (``(1,943/2,023)``) are grouped. The grammar's post-lexer applies the same rule."""
    if _THOUSANDS_RATIO.match(s, end) or s[max(0, start - 8):start].rstrip().endswith("/"):
        return False
    depth = 0
    for p in range(start):
        c = s[p]
        if c in "([" and not (p and s[p - 1] == "\\"):
            depth += 1
        elif c in ")]" and depth and not (p and s[p - 1] == "\\"):
            depth -= 1
    return depth > 0


def scan(line: str, lineno: int = 0) -> list[Token]:
    """Every numeric token of one line, in order (see the module docstring)."""
    return _Scanner(line, lineno).run()


def scan_words(line: str, lineno: int = 0) -> list[WordNumber]:
    """Small integers written as words ("seven", "one")."""
    return [WordNumber(lineno, m.start(), m.end(), m.group(0), NUMBER_WORDS[m.group(0).lower()])
            for m in _WORD.finditer(line)]
