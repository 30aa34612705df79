"""Text for the terminal that wraps without ever splitting a number, a word or a LaTeX command across lines
(:class:`Fit`): the one place terminal output decides where a line ends inside a cell. Its own module (rich alone,
no SymPy), so that ``symseq list`` and an audit with no derivation use it without loading the mathematics."""

from __future__ import annotations

import re

from rich.measure import Measurement
from rich.text import Text

ELLIPSIS = "…"
_NUMBER = re.compile(r"([−-]?\d+)(?:\.(\d+))?((?:e[−+-]?\d+)?)")
_CLOSING = set(",;:.)]}…'′ᵀ_^")  # never the first character of a continued line
_OPERATORS = set("+=<>≈&,;")  # a line may end after one of these


def _atom(ch: str) -> bool:
    """A character that belongs to a number, a word or a command name: no line may end between two of them."""
    return ch.isalnum() or ch in "_^"


def _break_ok(s: str, i: int) -> bool:
    """Whether a line may end between ``s[i-1]`` and ``s[i]`` inside one word: after an operator, a separator, an
    opening brace or a closing bracket (or between two calls of a chain), after LaTeX's ``\\\\`` row end, before a LaTeX command, or
    after a hyphen between letters;
    never inside a number, a word or a command name, and never before closing punctuation."""
    a, b = s[i - 1], s[i]
    if a == ")" and b == "." and s[i + 1:i + 2].isalpha():  # a chain of calls: x.view(…).transpose(…)
        return True
    if b in _CLOSING or (_atom(a) and _atom(b)) or b.isspace():
        return False
    if a == "\\":  # the end of "\\\\" (a LaTeX row), not the start of a command
        return i >= 2 and s[i - 2] == "\\" and (i < 3 or s[i - 3] != "\\") and b != "\\"
    if b == "\\":  # before a command, not before a row end
        return s[i + 1:i + 2].isalpha()
    if a in _OPERATORS or a in ")]}" or (a == "{" and b != "}"):  # \begin{ then array}: the name stays whole
        return True
    return a in "-−" and i >= 2 and s[i - 2].isalpha() and b.isalpha()


def shorten_number(text: str, width: int) -> str | None:
    """A decimal ``text`` (``0.792411504249``, ``−1.5e−7``) in at most ``width`` characters: its leading digits then
    an ellipsis (``0.79241150…``), or without the ellipsis when only zeros are dropped; ``None`` when not even its
    integer part and one decimal fit (the caller shows ``…`` alone).

    The digits kept are the leading digits of ``text`` as it was rounded (:mod:`symseq.numbers`); cutting a correctly
    rounded decimal after a nonzero digit it drops leaves digits that are also the true leading digits, so the
    ellipsis never hides a carry."""
    m = _NUMBER.fullmatch(text)
    if not m:
        return None
    head, frac, exp = m.group(1), m.group(2) or "", m.group(3)
    if len(text) <= width:
        return text
    for k in range(len(frac) - 1, 0, -1):
        cut = frac[k:]
        t = f"{head}.{frac[:k]}{exp}" if set(cut) == {"0"} else f"{head}.{frac[:k]}{ELLIPSIS}{exp}"
        if len(t) <= width:
            return t
    return head + exp if frac and set(frac) == {"0"} and len(head + exp) <= width else None


def _shorten(piece: str, width: int) -> str:
    """One unbreakable piece longer than ``width``: a number in it cut to its leading digits (with the brackets and
    punctuation around it kept when they fit), any other text cut with an ellipsis."""
    m = re.fullmatch(r"([^\w.−-]*)(.+?)([^\w.]*)", piece)
    if m and _NUMBER.fullmatch(m.group(2)):
        pre, num, post = m.groups()
        for p, q in ((pre, post), (pre, ""), ("", "")):
            short = shorten_number(num, width - len(p) - len(q))
            if short is not None:
                return p + short + q
        return ELLIPSIS
    return piece[:max(width - 1, 0)] + ELLIPSIS


def fit_lines(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words or at the safe points of
    :func:`_break_ok`; a piece that cannot fit is shortened (:func:`_shorten`), never split. Lines of ``text`` stay
    lines."""
    return ["".join(p if isinstance(p, str) else p[2] if len(p) == 3 else text[p[0]:p[1]] for p in line)
            for line in _fit(text, width)]


def _fit(text: str, width: int) -> list[list]:
    """The lines of :func:`fit_lines`, each a list of parts: ``(start, end)`` of ``text`` or a shortened piece
    ``(start, end, replacement)`` (so that a styled text keeps its styles). The spaces between words on one line,
    and before the first word of a line of ``text``, are kept as written."""
    width = max(width, 1)
    out: list[list] = []
    offset = 0
    for hard in text.split("\n"):
        line: list = []
        used, gap_from = 0, offset  # the spaces before the next word start at gap_from
        for m in re.finditer(r"\S+", hard):
            a, b = offset + m.start(), offset + m.end()
            gap = a - gap_from
            n = b - a
            if used + gap + n <= width:
                line += [(gap_from, b)] if gap else [(a, b)]
                used += gap + n
                gap_from = b
                continue
            if used:
                out.append(line)
                line, used = [], 0
            gap_from = b
            for pa, pb in _piece_spans(text, a, b):
                n = pb - pa
                if used + n <= width:
                    line.append((pa, pb))
                    used += n
                    continue
                if used:
                    out.append(line)
                if n <= width:
                    line, used = [(pa, pb)], n
                else:
                    short = _shorten(text[pa:pb], width)
                    line, used = [(pa, pb, short)], len(short)
        out.append(line)
        offset += len(hard) + 1
    return out


def _piece_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The word ``text[a:b]`` cut at the points where a line may end inside it (:func:`_break_ok`)."""
    word = text[a:b]
    cuts = [0] + [i for i in range(1, len(word)) if _break_ok(word, i)] + [len(word)]
    return [(a + x, a + y) for x, y in zip(cuts, cuts[1:])]


class Fit:
    """Text for the terminal that wraps to whatever width it is given without ever splitting a number, a word or a
    LaTeX command across lines: a piece too long for the width is shortened (``0.79241150…``, the full value being
    in ``symseq verify --json``). The one place terminal output decides where a line ends inside a cell.

    Args:
        text: a string, read as plain text (never as markup), or a :class:`rich.text.Text` whose styles are kept;
            its line breaks are kept.
        style: a rich style for the whole text.
        justify: "left" (default), "right" or "center", within the width given.
    """

    def __init__(self, text, style: str = "", justify: str | None = None):
        self.rich = text if isinstance(text, Text) else Text(str(text))
        self.text, self.style, self.justify = self.rich.plain, style, justify

    def __str__(self) -> str:
        return self.text

    @property
    def plain(self) -> str:
        """The whole text, as :attr:`rich.text.Text.plain` gives it."""
        return self.text

    def __rich_measure__(self, console, options) -> Measurement:
        pieces = [b - a for m in re.finditer(r"\S+", self.text) for a, b in _piece_spans(self.text, *m.span())]
        widest = max((len(x) for x in self.text.split("\n")), default=0)
        return Measurement(min(max(pieces, default=0), widest), widest).with_maximum(options.max_width)

    def __rich_console__(self, console, options):
        if options.max_width < 1:
            return
        lines = []
        for parts in _fit(self.text, options.max_width):
            line = Text()
            for p in parts:
                if isinstance(p, str):
                    line.append(p)
                elif len(p) == 2:
                    line.append_text(self.rich[p[0]:p[1]])
                else:
                    piece = self.rich[p[0]:p[1]]
                    piece.plain = p[2]  # spans past its new end are dropped
                    line.append_text(piece)
            lines.append(line)
        text = Text("\n", style=self.style, no_wrap=True, overflow="crop",
                    justify=self.justify or options.justify).join(lines)
        yield text
