"""Where a page states something in words and in formulas, as the audit and its benchmark read it.

The page's mathematics is written inline (``$…$``, ``\\(…\\)``) or displayed; its statements in words compare
(larger/smaller, increases/decreases, same/different, positive/negative, more/less … than, largest/smallest,
higher/lower, vanishes/explodes, above/below a value). :func:`comparisons` finds the comparison words a page uses
in its sentences (not inside formulas, headings, code or output; *more*/*less* only before *than*, *above*/*below*
only before a value), each marked a statement, a question or a quoted word. A derivation checks such a sentence
when a claim quotes the word with ``near=``: the audit then fails when the word changes. The audit lists the
others as statements no claim checks.

Source: issue 39, "claim words".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..read.document import Document
from ..read.page import MATH, _closing, math_bodies, math_spans  # noqa: F401 (the audit's names for them)

_DISPLAY_ENV = re.compile(r"\\(begin|end)\{(equation|align|gather|multline|eqnarray|displaymath|math)\*?\}")
_RELATION = re.compile(r"=|≈|≤|≥|<|>|\\approx|\\simeq|\\le|\\ge|\\in\b")
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")

# comparison words and what each becomes (greater becomes less; less becomes more)
FLIPS = dict([p for a, b in (("larger", "smaller"), ("increases", "decreases"), ("increase", "decrease"),
                              ("increased", "decreased"), ("increasing", "decreasing"), ("same", "different"),
                              ("positive", "negative"), ("more", "less"), ("largest", "smallest"),
                              ("higher", "lower"), ("vanishes", "explodes"), ("vanish", "explode"),
                              ("vanishing", "exploding"), ("above", "below")) for p in ((a, b), (b, a))]
              + [("greater", "less"), ("bigger", "smaller")])
# comparison words that say the same (a page may write "greater than" where a derivation quoted "larger than")
_SAME_AS = [("larger", "greater", "bigger"), ("smaller", "lower"), ("largest", "greatest", "biggest"),
            ("smallest", "lowest", "least"), ("increases", "grows"), ("decreases", "shrinks")]
SYNONYMS = {w: tuple(x for x in group if x != w) for group in _SAME_AS for w in group}
COMPARISON = re.compile(r"(?<![\\\w-])(" + "|".join(sorted(FLIPS, key=len, reverse=True)) + r")(?![\w-])",
                         re.IGNORECASE)
_THAN_AFTER = re.compile(r"[^.?!;:]{0,40}?\bthan\b", re.IGNORECASE)  # more … than, less … than
# above/below comparing: before a number, a formula or zero (not "the table below", "as above")
_VALUE_AFTER = re.compile(r"\s*(?:\$|\\\(|[-−+]?\.?\d|zero\b|one\b|its\b|the (?:threshold|mean|average)\b)",
                          re.IGNORECASE)
_QUOTES = {"“": "”", "‘": "’", '"': '"', "'": "'", "`": "`"}


# a matrix environment, not nested: the environment's name, its body (rows cut by \\, cells by &)
MATRIX_ENV = re.compile(r"\\begin\{([bpvBV]?matrix)\}((?:(?!\\begin\{).)*?)\\end\{\1\}")
_SPACING = re.compile(r"\\[,;!: ]|\\(?:qquad|quad|Bigl|Bigr|bigl|bigr|Big|big|left|right|displaystyle|boxed|nonumber)"
                      r"(?![A-Za-z])|\\begin\{(?:aligned|align\*?|split|gathered)\}|\\end\{(?:aligned|align\*?|split|"
                      r"gathered)\}|&|\\\\")


def synonym_quotes(text: str) -> list[str]:
    """``text`` with one of its comparison words put in other words of the same meaning (``larger`` →
    ``greater``, ``bigger``), case kept: the other ways a page may print a comparison a claim quotes."""
    out = []
    for m in re.finditer(r"[A-Za-z]+", text):
        for other in SYNONYMS.get(m.group().lower(), ()):
            other = other.capitalize() if m.group()[0].isupper() else other
            out.append(text[:m.start()] + other + text[m.end():])
    return out


def plain_formula(body: str) -> str:
    """A formula with LaTeX's spacing, sizing and alignment marks dropped (``\\,``, ``\\quad``, ``\\Bigl``, ``&``,
    ``\\\\``, an ``aligned`` environment's ``\\begin`` and ``\\end``), its closing full stop or comma too, and a group
    around all of it (what ``\\boxed{…}`` leaves) opened: the lines of an aligned display read as one text, a row
    that starts with its own text (not with ``&``) cut from the row above by a comma. A matrix environment
    (``bmatrix``, ``pmatrix`` …) is kept whole, its ``&`` and ``\\\\`` with it."""
    matrices: list = []  # a matrix environment keeps its rows and columns: set aside while the rows are read
    body = MATRIX_ENV.sub(lambda m: matrices.append(m.group(0)) or f"\x00{len(matrices) - 1}\x00", body)
    rows = body.split("\\\\")
    for k in range(1, len(rows)):  # a row with no text before its first & continues the equation above
        if rows[k].strip() and not rows[k].lstrip().startswith("&") and not rows[k].lstrip().startswith("\\end"):
            rows[k] = ", " + rows[k]  # … else it is an equation of its own
    body = "\\\\".join(rows)
    text = _SPACING.sub(" ", body).replace("\\lbrack", "[").replace("\\rbrack", "]").strip().rstrip(".,; ")
    text = re.sub("\x00(\\d+)\x00", lambda m: matrices[int(m.group(1))], text)
    while text.startswith("{") and _closing(text, 0, "{", "}") == len(text) - 1:
        text = text[1:-1].strip().rstrip(".,; ")
    return text


def display_blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The displayed formulas written over several lines, ``\\[`` … ``\\]`` or ``$$`` … ``$$`` with the opening mark
    on one line and the closing one on a later line: (the first line, 1-based; the text of each of its lines
    between the marks). A formula closed on its own line is :func:`math_bodies`' business."""
    out, k = [], 0
    while k < len(lines):
        ln = lines[k]
        rest = MATH.sub(" ", ln)  # formulas closed on this line
        opened = next(((m, rest.index(m)) for m in ("\\[", "$$") if m in rest), None)
        if opened is None:
            k += 1
            continue
        mark, at = opened
        close = "\\]" if mark == "\\[" else "$$"
        body = [rest[at + len(mark):]]
        j = k + 1
        while j < len(lines) and close not in lines[j] and j - k < 40:
            body.append(lines[j])
            j += 1
        if j < len(lines) and close in lines[j]:
            body.append(lines[j][:lines[j].index(close)])
            out.append((k + 1, body))
        k = j + 1
    return out


def formula_bodies(doc: Document, lines=None) -> list[tuple[int, int, int, str, list[str] | None]]:
    """The page's formulas outside code, each as (line, start, end, text, None) for one written on its line
    (:func:`math_bodies`) and (first line, 0, 0, its lines joined, the text of each of its lines) for a display
    written over several lines (:func:`display_blocks`, read whole; :func:`line_of` names the line of an equation
    of it). ``lines``: only the formulas on, or starting on, these lines (all of the page's by default)."""
    wanted = range(1, len(doc.lines) + 1) if lines is None else sorted(k for k in lines if 0 < k <= len(doc.lines))
    out = [(k, start, end, body, None) for k in wanted if k not in doc.code
           for start, end, body in math_bodies(doc.lines[k - 1])]
    return out + [(first, 0, 0, " ".join(texts), texts) for first, texts in display_blocks(doc.lines)
                  if first not in doc.code and (lines is None or first in lines)]


def line_of(sides: list[str], texts: list[str]) -> int:
    """The index of the line of a display (its ``texts``) where an equation of it starts: the first line holding its
    first side's text (spaces aside), else the first line."""
    key = re.sub(r"\s+", "", sides[0])[:24]
    for k, text in enumerate(texts):
        if key and key in re.sub(r"\s+", "", text):
            return k
    return 0


def display_lines(doc: Document) -> set:
    """Lines inside a displayed formula written over several lines (``$$`` or ``\\[`` alone on a line, or a
    LaTeX ``equation``/``align`` environment)."""
    out, inside, env = set(), False, 0
    for k, ln in enumerate(doc.lines, 1):
        s = ln.strip()
        for m in _DISPLAY_ENV.finditer(ln):
            env += 1 if m.group(1) == "begin" else -1
        if s in ("$$", "\\[", "\\]"):
            inside = not inside if s == "$$" else s == "\\["
            continue
        if inside or env > 0:
            out.add(k)
    return out


def formula_line(line: str) -> bool:
    """Whether ``line`` (with no formula delimiters) is a formula: a relation and at most two words of prose."""
    from ..read import FUNCTIONS

    words = [w for w in _PROSE_WORD.findall(line) if w.lower() not in FUNCTIONS]
    return bool(_RELATION.search(line)) and len(words) <= 2


def skipped(doc: Document) -> set:
    """The lines whose text is not the page's mathematics: headings, code, printed output, references and the
    column labels of tables."""
    return ({h.line for h in doc.headings} | set(doc.code) | set(doc.output) | set(doc.references)
            | {t.header for t in doc.tables})



def sentence_end(line: str, k: int, spans) -> str:
    """The mark that ends the sentence going on at column ``k`` of ``line`` (``.``, ``?``, ``!``), outside formulas
    and decimals; the line's last character when none does."""
    j = k
    while j < len(line):
        span = next((e for s, e in spans if s <= j < e), None)
        if span is not None:
            j = span
            continue
        c = line[j]
        if c in "?!":
            return c
        if c == "." and (j + 1 == len(line) or line[j + 1] in " \t\"”’)*_"):
            return c
        j += 1
    return line.rstrip()[-1:]


@dataclass(frozen=True)
class Comparison:
    """A comparison word of the page: its line, columns (``end`` exclusive), the word as printed, and whether its
    sentence is a ``"statement"``, a ``"question"`` (it states nothing true or false) or the word is ``"quoted"``
    (mentioned, not used)."""

    line: int
    start: int
    end: int
    word: str
    use: str
    context: str = ""  # the words around it, as printed

    @property
    def flipped(self) -> str:
        """The opposite word (larger → smaller), its case kept."""
        new, word = FLIPS[self.word.lower()], self.word
        if len(word) > 1 and word.isupper():
            return new.upper()
        return new[0].upper() + new[1:] if word[0].isupper() else new


CONTEXT = 30  # characters shown on either side of a comparison word


def comparisons(doc: Document) -> list[Comparison]:
    """The comparison words of the page's sentences, in reading order (see the module docstring)."""
    out = []
    skip, display = skipped(doc), display_lines(doc)
    for k, ln in enumerate(doc.lines, 1):
        if k in skip:
            continue
        spans = math_spans(ln)
        if k in display or (not spans and formula_line(ln)):
            continue
        for m in COMPARISON.finditer(ln):
            if any(s <= m.start() < e for s, e in spans) or "://" in ln[max(0, m.start() - 60):m.start()]:
                continue
            low = m.group(1).lower()
            if low in ("more", "less") and not _THAN_AFTER.match(ln, m.end()):
                continue  # "more details", "unless": no comparison
            if low in ("above", "below") and not _VALUE_AFTER.match(ln, m.end()):
                continue  # "the table below": a place on the page
            before_ch, after_ch = ln[m.start() - 1:m.start()], ln[m.end():m.end() + 1]
            if sentence_end(ln, m.end(), spans) == "?":
                use = "question"
            elif before_ch in _QUOTES and after_ch == _QUOTES[before_ch]:
                use = "quoted"
            else:
                use = "statement"
            a, b = max(0, m.start() - CONTEXT), min(len(ln), m.end() + CONTEXT)
            context = ("…" if a else "") + ln[a:b].strip() + ("…" if b < len(ln) else "")
            out.append(Comparison(k, m.start(), m.end(), m.group(1), use, context))
    return out
