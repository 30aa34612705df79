"""The page's own arithmetic, audited with no derivation at all.

A worked example prints statements a reader can check by hand: chains ``(0.1 + 0.3 + (−0.2) + 0.8) / 4 =
1.0 / 4 = 0.25``, dot products written out (``1×1.131 + 1×0 = 1.131``), ``√64 = 8``, ``e^{0.5} ≈ 1.6487``,
``log 2 ≈ 0.693``, lists computed entry by entry (``[0.1 − 0.25, …] = [−0.15, …]``), ``softmax([1, 2]) =
[0.269, 0.731]``, products of printed matrices. This module finds them in a handout's lines, reads each with
:mod:`symseq.read.syntax`'s grammar (never as code), decides it link by link from its own printed
operands (:mod:`symseq.verify.steps`) and reports what was checked, what is wrong (line, printed, correct
rounding) and which numbers are left for a derivation.

Finding statements: lines are cleaned of markup (``$``, backticks, ``**``, ``&``, ``\\\\``, list markers) without moving any column; a line that starts with ``=`` or ``≈`` (or an operator) continues the statement of the line
before. Each line is cut at its relations (``=``, ``≈``, ``\\approx``; never ``==``, ``<=``, ``+=``). The part
before the first relation is the longest tail of its text that the grammar reads and that starts after a space
or a colon (so ``h1 = …`` and ``the sum 0.2 + 0.3 = …`` start at the arithmetic); a middle part must be read
whole, or it ends one statement (its longest readable head) and starts the next (its longest readable tail);
the last part is read whole, or is a printed number or list at its head. A statement is checked when it has a
relation and at least one side that computes something (not a bare number).

Source: issue 13, build item 2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import sympy as sp

from ..errors import NotRealError, SymseqError
from ..read import (NAME, NUMBER, Ref, Statement, Vec, computes, is_number, is_scientific, is_word, name_key,
                    numbers, parse, read_number, result_parts, scan, show, with_number, without_sign)
from ..read.grammar import terminal
from ..verify.steps import Link, decide, exact_result, inner_steps
from .attribution import WITHIN_ROUNDING, Attribution, PageStatement, Rule
from ..read.document import Document, row_cells
from .structure import HARD, classify

# relation characters; ==, <=, >=, !=, +=, -=, *=, /=, := and => are not relations of arithmetic
_REL = re.compile(r"(?<![=<>!+\-*/:≠])(" + terminal("REL") + r")(?![=>])")  # the grammar's relations
_MATRIX = re.compile(r"\\begin\{(\w*matrix|array)\}.*?\\end\{\1\}")
_BLANK = re.compile(r"\$|`|\*\*|__|\\\(|\\\)|\\\[|\\\]|&|\\\\|✅|✓|✔|❌|✗|→|⇒|\\quad|\\qquad")
_TRAIL = ",.;:!?"


class Repair(NamedTuple):
    """The operand a wrong statement is put down to: its token (line, start and end columns), as printed, and the
    value with which the statement holds."""

    line: int
    start: int
    end: int
    printed: str
    correct: str


@dataclass
class Checked:
    """One arithmetic statement of the page, decided.

    Attributes:
        line: the line of its last part (where its result is printed).
        first: the line it starts on.
        text: the statement as read (its parts joined by their relations).
        links: the decided links (:class:`symseq.verify.steps.Link`).
        spans: (line, start, end) of each part in the text.
        repair: when the statement is wrong at one of its operands rather than at its result, that operand's
            :class:`Repair` (:func:`_repair`); else None.
        statement: the parsed :class:`~symseq.read.tree.Statement` (its names read with the values the page bound
            to them), or None for a relation between tables.
    """

    line: int
    first: int
    text: str
    links: list
    spans: list = field(default_factory=list)
    repair: "Repair | None" = None
    statement: "Statement | None" = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return all(link.ok for link in self.links)

    @property
    def status(self) -> str:
        """"ok"; "wrong" (an erratum: some link fails beyond the rounding of its printed operands); or "drift":
        every failing result lies within the rounding of its printed operands, so only the true values (a
        derivation) can decide it."""
        bad = self.wrong
        if not bad:
            return "ok"
        return "drift" if all(link.kind == "result" and link.within_rounding for link in bad) else "wrong"

    @property
    def wrong(self) -> list[Link]:
        return [link for link in self.links if not link.ok]


@dataclass
class PageArithmetic:
    """The page's own arithmetic, decided (:func:`audit_arithmetic`): the statements checked, the statements that
    could not be read or cannot hold, and the page's tokens, each attributed by the statement that holds it
    (:class:`~symseq.audit.attribution.PageStatement`). Not a verdict: :func:`audit_page` makes the audit of a page
    with no derivation of it, and :meth:`symseq.audit.report.AuditReport.add_arithmetic` counts it in the audit
    with one."""

    path: Path
    statements: list
    tokens: list  # the document's tokens, each attributed covered / wrong / uncovered / structural
    unread: list = field(default_factory=list)  # (line, text, reason) of statements that could not be decided
    cannot_hold: list = field(default_factory=list)  # Broken: a statement that lost a number, whose value is not
    # real, that gives a name two values (numbered_runs), or a shape that does not fit (symseq.audit.shapes)

    @property
    def errata(self) -> list[Checked]:
        """Statements wrong from their own printed operands, beyond their rounding."""
        return [s for s in self.statements if s.status == "wrong"]

    @property
    def drift(self) -> list[Checked]:
        """Statements whose printed result differs from the value of its printed operands only within their
        rounding: left for a derivation to decide."""
        return [s for s in self.statements if s.status == "drift"]

    @property
    def decided(self) -> list[Checked]:
        return [s for s in self.statements if s.status != "drift"]


# ---------------------------------------------------------------------------
# finding statements
# ---------------------------------------------------------------------------


def _clean(line: str, code: bool = False) -> str:
    """``line`` with markup blanked out, every column kept; the cell and row separators of a LaTeX matrix
    environment (``&``, ``\\\\``) stay, as the grammar reads the matrix by them."""
    matrices = [(m.start(), m.end()) for m in _MATRIX.finditer(line)]

    def blank(m):
        inside = any(a < m.start() < b for a, b in matrices) and m.group(0) in ("&", "\\\\")
        return m.group(0) if inside else " " * len(m.group(0))

    if "\\]" not in line:  # Markdown's escaped bracket, \[0.1, 0.2], is a bracket, not LaTeX's display math
        line = re.sub(r"\\\[(?=[^\[\]]*\])", " [", line)
    out = _BLANK.sub(blank, line)
    out = re.sub(r"\\mathrm\{([-+−\d.\s]*)\}", lambda m: " " * 8 + m.group(1) + " ", out)  # \mathrm{0.330238.}
    out = re.sub(r"^\s{0,3}#{1,6}\s", lambda m: " " * len(m.group(0)), out)  # a Markdown heading's marks
    out = re.sub(r"^\s*(?:[-*+•]|\d+[.)])\s+", lambda m: " " * len(m.group(0)), out)  # a list item's marker
    return out.replace("\t", " ")


@dataclass
class _Logical:
    text: str
    pieces: list  # (offset in text, line number)

    def where(self, offset: int) -> tuple[int, int]:
        """(line, column) of an offset of the joined text."""
        line, base = self.pieces[0][1], 0
        for off, ln in self.pieces:
            if off <= offset:
                line, base = ln, off
        return line, offset - base


# a line that starts with an operator continues the expression of the line above (+0.5760[2 1] under 0.1400[1 1]);
# a bullet (+ item, * item) has a space after its mark
_GOES_ON_FROM = re.compile(r"(?:[+*](?=\S)|[·×/]|\\cdot(?![A-Za-z])|\\times(?![A-Za-z]))")
_RESTART = re.compile(r"^\s*(" + NAME.pattern + r")\s*(?==(?!=)|≈)")


def _restarts(before: str, text: str) -> int:
    """The column where ``text`` goes on after repeating the name that the line ``before`` set to a computation
    with no printed result (``z = 0.3(0.574) + 0.2(0.3) + 0.1`` then ``z = 0.151``): the two lines are one
    statement; 0 when they are not."""
    m, first = _RESTART.match(text), _RESTART.match(before)
    if m is None or first is None or name_key(m.group(1)) != name_key(first.group(1)) or is_word(m.group(1)):
        return 0
    rest = before[first.end():]
    if len(_REL.findall(rest)) != 1 or not re.search(r"[-+*/·×(]", rest):
        return 0  # before prints a result already, or no computation
    return m.end()


MAX_LIST_LINES = 8  # a list of numbers printed over at most this many lines is read as one


def _unclosed(text: str) -> bool:
    """Whether ``text`` ends inside a list of numbers it opened (``= [ 0.1495, -0.0236,`` with the rest on the next
    line)."""
    k = max(text.rfind("["), text.rfind("("))
    return k >= 0 and "]" not in text[k:] and ")" not in text[k:] and bool(
        re.fullmatch(r"[\[(]\s*(?:[-−+]?\d[\d.eE+-]*\s*,\s*)+[-−+]?\d?[\d.eE+-]*\s*,?\s*", text[k:]))


def _logical_lines(doc: Document) -> list[_Logical]:
    """The page's lines as statements read them: a line that starts with a relation continues the line before it, and
    so does the rest of a list of numbers opened on the line before it;
    in display math (``\\[ … \\]``, ``$$ … $$``) it continues the last line of the display before it too, blank
    lines and delimiters between them or not, when no prose comes between (a chain written one display per step)."""
    out: list[_Logical] = []
    prev_blank = True
    in_display = False  # inside \[ … \] or $$ … $$ at the start of the line
    last_in_display = False  # the last line read into ``out`` was display math
    for i, raw in enumerate(doc.lines, start=1):
        code = i in doc.code
        math = in_display or (not code and raw.lstrip().startswith(("\\[", "$$")))
        if not code:
            for m in re.finditer(r"\\\[|\\\]|\$\$", raw):
                in_display = {"\\[": True, "\\]": False}.get(m.group(0), not in_display)
        text = _clean(raw, code)
        if not text.strip():
            prev_blank = True
            continue
        stripped = text.lstrip()
        joins = not prev_blank or (math and last_in_display)
        again = _restarts(out[-1].text, text) if out and joins else 0
        open_list = out and not prev_blank and _unclosed(out[-1].text) and len(out[-1].pieces) < MAX_LIST_LINES
        if out and (open_list or joins and (re.match(r"(=|≈|\\approx)(?!=)", stripped) or _GOES_ON_FROM.match(stripped)
                                            or again)):
            last = out[-1]
            off = len(last.text) + 1
            last.text += " " + " " * again + text[again:]  # z = 0.3(0.574) + … / z = 0.151: the name once
            last.pieces.append((off, i))
        else:
            out.append(_Logical(text, [(0, i)]))
        prev_blank = False
        last_in_display = math
    return out


def _readable(text: str, names: dict | None = None):
    try:
        return parse(text, names)
    except SymseqError:
        return None
    except RecursionError:  # pragma: no cover - the grammar bounds its depth
        return None


SIDE = 400  # at most this many characters of a part are tried as one side of a statement (bounded work)


# an operator before a tail's start: the tail is its right operand, and the side goes on to the left
_LEFT_OPERAND = tuple("+-−*/·×⊙∘⊗^") + ("\\cdot", "\\times", "\\odot", "\\circ", "\\otimes")


def _tail(seg: str, base: int, names: dict | None = None):
    """The longest readable tail of a part (starting after a space or a colon): (node, start, end) or None."""
    end = len(seg.rstrip())
    first = max(0, end - SIDE)
    starts = ([0] if first == 0 else []) + [i + 1 for i, ch in enumerate(seg[:end]) if ch in " :" and i >= first]
    for s in starts:
        body = seg[s:end]
        if not body.strip() or seg[:s].rstrip().endswith(_LEFT_OPERAND):
            continue  # the right operand of a product the grammar does not read (dL/dh ⊙ (1 - h²)): not a side
        node = _readable(body, names)
        if node is not None:
            lead = len(body) - len(body.lstrip())
            return node, base + s + lead, base + end
    return None


def _head(seg: str, base: int, *, numbers_only: bool, names: dict | None = None):
    """The longest readable head of a part, ending before a space or punctuation: (node, start, end) or None."""
    lead = len(seg) - len(seg.lstrip())
    last = min(len(seg), lead + SIDE)
    ends = sorted({i for i, ch in enumerate(seg[:last]) if i > lead and (ch == " " or ch in _TRAIL + ")")} | {last},
                  reverse=True)
    for e in ends:
        if e < len(seg) and seg[e] == "." and e + 1 < len(seg) and seg[e + 1].isdigit():
            continue
        body = seg[lead:e].rstrip().rstrip(_TRAIL)
        if not body:
            continue
        node = _readable(body, names)
        if node is not None and (not numbers_only or is_number(node)):
            return node, base + lead, base + lead + len(body)
    return None


def _whole(seg: str, base: int, names: dict | None = None):
    body = seg.strip()
    if len(body) > SIDE:
        return None
    trimmed = body.rstrip(_TRAIL)
    node = _readable(trimmed, names) if trimmed else None
    if node is None:
        return None
    start = base + (len(seg) - len(seg.lstrip()))
    return node, start, start + len(trimmed)


# the name a relation binds: the last name before it (``W_z = …``, ``\\mathbf q_6\\approx …``, ``D=8,H=2``)
_BOUND = re.compile(r"(?<![A-Za-z0-9_\\])(" + NAME.pattern + r")\s*$")
MAX_NAMES = 2000  # names bound per page (bounded work)
NAME_REACH = 60  # lines: a name is read with the value bound to it at most this far above (pages reuse symbols)
CHAIN_PART = 40  # a part of a binding chain that cannot be read (LN_2(u_6)) is skipped when at most this long
_OPERATORS = tuple("+-−*/·×÷@^([{") + ("\\cdot", "\\times")
# what ends a factor written before a name with only a space between (a product: y_2 = W_y h_2 = 1.558 binds y_2,
# not h_2): a number, or a letter with a short subscript (W_y, h_{t-1}, W_hh; a word such as "hidden" or "Let",
# or a program's name such as prev_hidden, before a name is a label, and the name after it is bound; so is "(1)")
_FACTOR_END = re.compile(r"(?:(?<![A-Za-z_])(?:" + NUMBER + r")"
                         r"|(?<![\\A-Za-z0-9_])[A-Za-z]_(?:\{[^{}\s]{1,8}\}|[A-Za-z0-9]{1,2})"
                         r"(?:\^\S+)?)$")


def _bindings(segs: list, names: dict) -> list[tuple[int, str, object]]:
    """(offset from which it holds, key, printed tree) of each name a logical line binds to a printed number or
    list: ``name =
    printed`` or ``name = … = printed`` (the chain's last printed result: a computed, rounded result is bound with
    its printed precision)."""
    out = []
    for i in range(len(segs) - 1):
        seg, base = segs[i]
        m = _BOUND.search(seg)
        before = seg[:m.start(1)].rstrip() if m else ""
        if m is None or is_word(m.group(1)) or before.endswith(_OPERATORS) or _FACTOR_END.search(before):
            continue  # not a name, or the last operand of an expression (W @ x = …, W_y h_2 = …)
        env = dict(names)
        env.update({k: v for off, k, v in out})
        bound = None
        for nxt, nbase in segs[i + 1:]:  # every part of a chain is equal: the name is its last printed value
            head = _head(nxt, nbase, numbers_only=True)
            if head is not None:
                bound, end = head[0], head[2]  # bound from the end of its value on (q = q + 1 = 2 reads the old q)
            if _whole(nxt, nbase, env) is None and (head is not None or len(nxt.strip()) > CHAIN_PART):
                break  # prose after the printed value, or a long part that is no step of the chain
        if bound is not None:
            out.append((end, name_key(m.group(1)), bound))
    return out


class Broken(NamedTuple):
    """A statement of the page's arithmetic that cannot hold: a number was lost from it, leaving an operator with
    nothing on one side (``1 /  = 0.577``, ``[1, , 0]``, ``\frac{a}{}``, a code span that ends in ``=``; see
    :func:`lost_numbers`), or it prints a number for a value that is not real (``sqrt(-3) ≈ 1.732``, ``1 / 0 = 5``).
    Columns are 0-based, ``end`` exclusive."""

    line: int
    start: int
    end: int
    text: str
    reason: str
    correct: str = "—"  # the number to print instead, when one sign slip explains it (−64 for 64 in √−64 = 8)


_N = f"(?:{NUMBER})"  # a printed number, unsigned
_TEX_OP = r"\\(?:cdot|times|div)(?![A-Za-z])"  # LaTeX's product and quotient signs, as · × ÷
_MISSING = [  # (pattern over the cleaned line, reason); each needs a number beside the gap, so prose is not read
    (re.compile(rf"(?<=[\d)\]])\s*(?<![/:])(?<!\*\*)(?:(?:[*/·÷^]|{_TEX_OP})\s*(?=[+*/×·÷^=≈)\],]|\\approx|{_TEX_OP})"
                rf"|[+×]\s*(?=[+*/×·÷^=≈]|\\approx|{_TEX_OP}))"),
     "an operator with no number after it"),  # "(0.84×)" and "(512+)" are words: a ratio, "or more"
    (re.compile(rf"(?:^|(?<=[=≈(\[,]))\s*(?<![/*])(?<!\[)(?:[*/×·÷^]|{_TEX_OP})\s*(?={_N})"),  # [^1] is a footnote
     "an operator with no number before it"),
    (re.compile(r"(?:(?<=[^=<>!]=)|(?<=≈))\s+(?=[=≈](?!=))"), "a relation with nothing after it"),
    (re.compile(rf"(?<=[=≈])\s*\.\s+(?=[\[(\d])|(?<=[\])\d])\s+\.\s*(?=[=≈])"), "a product with one factor"),
    (re.compile(r"\b(?:sqrt|exp|log|ln|tanh|sin|cos|softmax|σ)\(\s*\)\s*(?=[=≈]|\\approx)"),
     "a function of nothing"),
    (re.compile(rf"(?<=\d)\s+(?:rather\s+)?than\s*(?=[:;,.!?)]|$)"), "a comparison with nothing after 'than'"),
    (re.compile(r"(?<=[A-Za-z\d)\]])\^\s*(?=[=≈]|\\approx)"), "a power with no exponent"),  # e^ = 1.78
    (re.compile(r"(?<=\))\s*\(\s*\)|\(\s*\)\s*(?=\()"), "a product with an empty factor"),  # (0.73)() + …
    # a relation closed by a bracket with nothing after it ("taking the score to be ≈ )"); "(=)" names the sign
    (re.compile(r"(?<=[\w)\]}])\s*(?:=|≈|\\approx)\s*(?=[)\]])"), "a relation with nothing after it"),
]
# the last line of a display ending in an operator or relation, the display closed on the next line
_DISPLAY_TAIL = re.compile(rf"(?:[+*/×·÷^=≈]|\\approx|{_TEX_OP})\s*$")
_NUMBER_LIST = re.compile(r"[\[(][^\[\]()]*\d[^\[\]()]*[\])]")  # a bracketed list with a number in it
_LIST_GAP = re.compile(r"[\[(]\s*,|,\s*,|,\s*\]")  # (2,) is a tuple of one
_LATEX_GAP = re.compile(r"\\[dt]?frac\s*\{\s*\}|\\[dt]?frac\s*\{[^{}]*\}\s*\{\s*\}|\\sqrt\s*\{\s*\}|(?<![}\s])\^\s*\{\s*\}")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_SPAN = re.compile(r"`([^`\n]+)`")  # an inline code span: Markdown's way to print a formula in many pages
_SPAN_END = re.compile(rf"(?:[=≈+*/×·÷^,(\[]|\s\.)\s*$")
_SPAN_START = re.compile(r"^\s*(?:[=≈*/×·÷^,]|\.\s)")


def lost_numbers(doc: Document) -> list[Broken]:
    r"""The places where the page's arithmetic lost a number (:class:`Broken`), on its lines that are not
    code: an operator between a number and another operator, relation or closing bracket (``1 /  = 0.577``,
    ``0* + 0*0``), a ``*``, ``/``, ``×`` or ``^`` with no number before it (``= / 4.56``), two relations in a row,
    a dot product with one vector (``=  . [1, 1, 0]``), ``sqrt() ≈``, an empty entry of a list that holds a number
    (``[1, , 0]``, ``[, 0]``), a number compared with nothing (``index 4 rather than :``), a power with no exponent
    (``e^ = 1.78``), an empty LaTeX argument (``\frac{1}{}``, ``\sqrt{}``) and an inline code span of a formula
    that ends in a relation or operator or begins with one (`` `1 / 1.732 = ` ``). A statement so cut cannot be
    read, so no statement checks it; these say so, at the line.

    Source: issue 13 ("a wrong number must never pass": a deleted number must not leave a page that passes).
    """
    out = []
    for i, raw in enumerate(doc.lines, start=1):
        if i in doc.code:
            continue
        text = _clean(_URL.sub(lambda m: " " * len(m.group(0)), raw))  # a web address is not arithmetic
        hits = [(m.start(), m.end(), why) for pattern, why in _MISSING for m in pattern.finditer(text)]
        if i < len(doc.lines) and doc.lines[i].strip() and i + 1 not in doc.code:
            # the paragraph goes on below ("… than" ↵ "head 1 does"): the comparison is not cut
            hits = [h for h in hits if not (h[2].endswith("'than'") and not text[h[1]:].strip())]
        hits += [(lst.start() + m.start(), lst.start() + m.end(), "an empty entry of a list")
                 for lst in _NUMBER_LIST.finditer(text) for m in _LIST_GAP.finditer(lst.group(0))]
        hits += [(m.start(), m.end(), "an empty argument") for m in _LATEX_GAP.finditer(raw)
                 if re.search(r"\d", raw)]
        tail = _DISPLAY_TAIL.search(text)
        if tail and re.search(r"\d", text) and _closes_display(doc, i):
            hits.append((tail.start(), tail.end(), "an operator or relation with no number after it"))
        for m in _SPAN.finditer(raw):
            body = m.group(1)
            if re.search(r"\d", body) and (_SPAN_END.search(body) or _SPAN_START.search(body)) \
                    and re.search(r"[=≈]|\d\s*[+*/×·÷^]\s*\d", body):
                hits.append((m.start(), m.end(), "a formula that ends or begins with an operator"))
        for a, b, why in sorted(hits)[:1]:  # one per line: the first gap says where to look
            out.append(Broken(i, a, b, raw.strip(), why))
    return out


_CONFLICT = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(?:\s|$)")
REPEATED_LINES = 8  # a run of at least this many lines printed twice, word for word, is the page repeated
REPEATED_CHARS = 300  # … holding at least this many characters


def repeated_text(doc: Document) -> list[Broken]:
    """Text the page holds twice: merge-conflict markers (``<<<<<<<``, ``=======``, ``>>>>>>>``: two versions of
    the lines between them, one :class:`Broken` at the first marker) and a run of :data:`REPEATED_LINES` lines or
    more (outside code) printed again word for word further down (at the copy's first line). A page in either
    state was not meant to be read as it stands.

    Source: issue 40, "a repeated text is recognised and said"."""
    out = []
    marks = [k for k, ln in enumerate(doc.lines, 1) if _CONFLICT.match(ln)]
    if any(doc.lines[k - 1].startswith("<<<<<<<") for k in marks) and \
            any(doc.lines[k - 1].startswith(">>>>>>>") for k in marks):
        out.append(Broken(marks[0], 0, len(doc.lines[marks[0] - 1]), doc.lines[marks[0] - 1].strip(),
                          f"merge-conflict markers at lines {', '.join(map(str, marks))}: the page holds two "
                          f"versions of the text between them; keep one"))
    text = [ln.strip() if k not in doc.code else "" for k, ln in enumerate(doc.lines, 1)]
    first: dict = {}
    k = 0
    while k < len(text):
        run = next((j for j in first.get(text[k], ()) if j < k), None) if text[k] else None
        n = 0
        if run is not None:
            while k + n < len(text) and run + n < k and text[run + n] == text[k + n]:
                n += 1
        lines = [t for t in text[k:k + n] if t]
        if run is not None and len(lines) >= REPEATED_LINES and sum(map(len, lines)) >= REPEATED_CHARS:
            out.append(Broken(k + 1, 0, len(doc.lines[k]), doc.lines[k].strip(),
                              f"lines {k + 1}–{k + n} print lines {run + 1}–{run + n} again, word for word: the "
                              f"page (or a part of it) is repeated"))
            k += n
            continue
        if text[k]:
            first.setdefault(text[k], []).append(k)
        k += 1
    return out


_INDEXED = re.compile(r"^(.+?)_(\d{1,3})$")  # a name key with a numeric index: k_1, v_{0} (key v_0)


def _index_fault(indices: list[int]) -> tuple[int, int] | None:
    """(position, index the run expects there) of the one index that breaks a run of consecutive indices
    (ascending or descending), or None when they make a run or no single index explains the break."""
    n = len(indices)
    for step in (1, -1):
        for start in (indices[0], indices[1] - step, indices[-1] - step * (n - 1)):
            off = [j for j in range(n) if indices[j] != start + step * j]
            if len(off) == 1:
                return off[0], start + step * off[0]
    return None


def numbered_runs(doc: Document) -> list[Broken]:
    r"""Names numbered in a row on one line whose numbers do not make a run: ``k_0=[…]``, ``k_1=[…]``, ``k_2=[…]``
    printed as ``k_0``, ``k_2``, ``k_2`` gives ``k_2`` two values, and ``k_0``, ``k_1``, ``k_3`` skips a number.
    One :class:`Broken` per line, at the name out of the run (its correct name in ``correct``), or, for two
    definitions of one name with two values, at the first. A name printed again with the same value is a
    restatement, not a slip; two or three definitions that are not in a row of one name are left alone.

    Source: issue 39 ("a renamed vector, now defined twice").
    """
    out = []
    for lg in _logical_lines(doc):
        text = lg.text
        rels = list(_REL.finditer(text))
        if len(rels) < 2:
            continue
        bounds = [0] + [m.end() for m in rels]
        defs: dict = {}  # base name -> [(index, name start, name end, printed value)]
        for i, m in enumerate(rels):
            seg = text[bounds[i]:m.start()]
            name = _BOUND.search(seg)
            if m.group(0) != "=" or name is None or _FACTOR_END.search(seg[:name.start(1)].rstrip()):
                continue
            k = _INDEXED.match(name_key(name.group(1)))
            nxt = text[m.end():rels[i + 1].start() if i + 1 < len(rels) else len(text)]
            head = _head(nxt, m.end(), numbers_only=False)
            if k is None or head is None or not re.search(r"\d", text[head[1]:head[2]]):
                continue
            defs.setdefault(k.group(1), []).append((int(k.group(2)), bounds[i] + name.start(1),
                                                    bounds[i] + name.end(1), text[head[1]:head[2]]))
        for base, run in defs.items():
            indices = [d[0] for d in run]
            values: dict = {}
            for d in run:
                values.setdefault(d[0], set()).add(re.sub(r"\s+", "", d[3]))
            twice = [d for d in run if len(values[d[0]]) > 1]
            fault = _index_fault(indices) if len(run) >= 3 else None
            if fault is None and not twice:
                continue
            j = fault[0] if fault is not None else None
            line, col = lg.where(run[j][1] if j is not None else twice[0][1])
            name = text[run[j][1]:run[j][2]] if j is not None else text[twice[0][1]:twice[0][2]]
            if j is not None:
                correct = f"{base}_{fault[1]}"
                why = (f"{name} breaks the run of {base}'s numbers on this line "
                       f"({', '.join(f'{base}_{i}' for i in indices)}): it names another quantity")
            else:
                correct = "—"
                shown = " and ".join(sorted(values[twice[0][0]]))
                why = f"{name} is given two values on this line ({shown}): one of them names another quantity"
            out.append(Broken(line, col, col + len(name), name, why, correct))
    return out


# one item of an enumeration of names: a short formula of names whose scripts hold numbers (w_x^{[2]}, g_1^zh_0)
_ITEM = re.compile(r"(?<![A-Za-z\\])(?:\\mathbf\s*|\\boldsymbol\s*)?"
                   r"[A-Za-z](?:\s*[_^]\s*(?:\{[^{}]{1,12}\}|[A-Za-z0-9]))+"
                   r"(?:\s*(?:\\mathbf\s*)?[A-Za-z](?:\s*[_^]\s*(?:\{[^{}]{1,12}\}|[A-Za-z0-9]))+)?")
# what separates the items of an enumeration: a comma, "and" or "or" (spaces stand for inline formulas' marks)
_BETWEEN = re.compile(r"\s*(?:,\s*(?:and|or)?|and|or)\s*")
_SLOT = re.compile(r"(?<=[_{\[(,])-?\d+(?=[}\]),]|$)|(?<=_)\d(?![\d])")  # a number in a script: h_{-1}, w^{[2]}


def _enumerations(text: str) -> list[list[tuple[int, str]]]:
    """The enumerations of names in a logical line (its inline formulas' marks blanked): runs of at least three
    items (:data:`_ITEM`) separated by commas, "and" or "or" alone: ``w_x^{[0]},w_x^{[1]},w_x^{[2]}``,
    ``g_0^zh_{-1}, g_1^zh_0, and g_2^zh_1``. Each item as (offset, text)."""
    runs, cur, end = [], [], 0
    for m in _ITEM.finditer(text):
        if cur and not _BETWEEN.fullmatch(text[end:m.start()]):
            if len(cur) >= 3:
                runs.append(cur)
            cur = []
        cur.append((m.start(), m.group(0)))
        end = m.end()
    if len(cur) >= 3:
        runs.append(cur)
    return runs


def numbered_lists(doc: Document) -> list[Broken]:
    r"""Enumerations of one name numbered in a row whose numbers do not make a run: the labels
    ``w_x^{[0]},w_x^{[1]},w_x^{[3]}`` skip a number, the contributions ``g_0^zh_{-1}``, ``g_2^zh_0``,
    ``g_2^zh_1`` name a step twice. Every item must be the same name with only its numbers changed, and each
    numbered place of it must run by one up or down except at one item: that item is the :class:`Broken`, its
    correct name in ``correct``. An enumeration that skips on purpose (``x_1, x_3, x_5``) has no single item off
    its run and is left alone.

    Source: issue 39 ("a time-step subscript", "a renamed vector").
    """
    out = []
    for lg in _logical_lines(doc):
        for run in _enumerations(lg.text):
            shapes = {re.sub(r"[{}]", "", _SLOT.sub("#", re.sub(r"\s+", "", t))) for _, t in run}  # h_{-1}: h_#
            slots = [[int(x.group(0)) for x in _SLOT.finditer(re.sub(r"\s+", "", t))] for _, t in run]
            if len(shapes) != 1 or not slots[0] or len({len(s) for s in slots}) != 1:
                continue
            for place in range(len(slots[0])):
                indices = [s[place] for s in slots]
                if len(set(indices)) == 1:
                    continue  # a number every item shares (the 0 of h_{t,0}): not a run
                fault = _index_fault(indices)
                if fault is None:
                    continue
                j, want = fault
                offset, item = run[j]
                line, col = lg.where(offset)
                ms = list(_SLOT.finditer(item))
                fix = (item[:ms[place].start()] + str(want) + item[ms[place].end():]) \
                    if len(ms) == len(slots[0]) else "—"
                out.append(Broken(line, col, col + len(item), item,
                                  f"{item} breaks the run of the enumeration {', '.join(t for _, t in run)}: it "
                                  f"names another quantity", fix))
                break
    return out


def _closes_display(doc: Document, i: int) -> bool:
    """Whether the next line with text after line ``i`` closes display math (``\\]``, ``$$``, ``\\end{…}``): the
    display's formula ends on line ``i``."""
    for raw in doc.lines[i:i + 3]:
        t = raw.strip()
        if t:
            return t.startswith(("\\]", "$$", "\\end{"))
    return False


def statements_of(doc: Document) -> list[tuple[Statement, list, _Logical]]:
    """The arithmetic statements of a document: (statement, spans (line, start, end) of its parts, its logical
    line), in reading order.

    Names: a name printed before a relation whose chain ends in a printed number or list (``W_z = [[0.3, 0.2],
    [0.1, 0.5]]``, ``h_hat = tanh([0.55, 0.35]) = [0.500, 0.337]``) is bound to that printed value from there
    on (a later binding shadows an earlier one), and statements at most :data:`NAME_REACH` lines below that use
    the name (or an entry of it: ``r_{6,2}`` of ``r_6``) read its printed value
    (:class:`symseq.read.tree.Ref`); further down a page may use the symbol for something else."""
    out = []
    bound: dict = {}  # key → (line, printed tree)
    for lg in _logical_lines(doc):
        text = lg.text
        rels = list(_REL.finditer(text))
        if not rels:
            continue
        here = lg.pieces[0][1]
        names = {k: node for k, (line, node) in bound.items() if here - line <= NAME_REACH}
        bounds = [0] + [m.end() for m in rels]
        ends = [m.start() for m in rels] + [len(text)]
        segs = [(text[a:b], a) for a, b in zip(bounds, ends)]
        relations = [("≈" if m.group(0) != "=" else "=") for m in rels]
        line_names = _bindings(segs, names)

        def env_at(offset: int, start=dict(names), line_names=line_names) -> dict:
            env = dict(start)
            env.update({k: v for off, k, v in line_names if off < offset})
            return env

        parts: list = []  # (node, start, end)
        rel_used: list = []

        def close():
            del rel_used[max(len(parts) - 1, 0):]
            if parts and isinstance(parts[0][0], Ref):  # q = q + 1 = 2 names what the chain computes
                del parts[0]
                del rel_used[:1]
            if len(parts) >= 2 and any(computes(p[0]) for p in parts):
                st = Statement(tuple(p[0] for p in parts), tuple(rel_used),
                               tuple(text[p[1]:p[2]] for p in parts))
                spans = [lg.where(p[1]) + (lg.where(p[1])[1] + (p[2] - p[1]),) for p in parts]
                out.append((st, spans, lg))
            parts.clear()
            rel_used.clear()

        for k, (seg, base) in enumerate(segs):
            last = k == len(segs) - 1
            env = env_at(base)
            if parts:
                whole = _whole(seg, base, env)
                if whole is not None:
                    parts.append(whole)
                    if last:
                        close()
                        break
                    rel_used.append(relations[k])
                    continue
                head = _head(seg, base, numbers_only=True)
                if head is not None:
                    parts.append(head)
                close()
            if last:
                break
            tail = _tail(seg, base, env)
            if tail is not None:
                parts.append(tail)
                rel_used.append(relations[k])
        close()
        for off, key, node in line_names:
            bound.pop(key, None)  # a later binding shadows (and moves to the end of the bounded table)
            bound[key] = (here, node)
            while len(bound) > MAX_NAMES:
                bound.pop(next(iter(bound)))
    return out


# statements in words: "for scores [0, 8], softmax is approximately [0.000335, 0.999665]", "[5, 6, 7, 8] … mean = 6.5"
_LIST = re.compile(r"[\[(][^\[\]()]*,[^\[\]()]*[\])]")
_SOFTMAX_WORD = re.compile(r"\bsoftmax\b", re.IGNORECASE)
_WEIGHT_WORD = re.compile(r"\b(probabilities|weights)\b", re.IGNORECASE)
_STAT = re.compile(r"\b(mean|average|sum|range|std|standard deviation)\s*(=|≈|is|:)\s*(~|≈)?\s*"
                   r"(-?(?:" + NUMBER + r"))(?![\d.])", re.IGNORECASE)
_QUOTED = re.compile(r"(?<![\w\"'])(\"[^\"\n]{1,30}\"|'[^'\n]{1,30}')(?![\w\"'])")
NEAR = 3  # a statistic on a line of its own refers to a list printed at most this many lines above it


def _lists(text: str) -> list:
    """(node, start, end) of each printed list of numbers in a cleaned line."""
    out = []
    for m in _LIST.finditer(text):
        node = _readable("[" + m.group(0)[1:-1] + "]")
        if node is not None and is_number(node) and not any(isinstance(i, Vec) for i in node.items):
            out.append((node, m.start(), m.end()))
    return out


# a result in words: the statement says its value does not exist (… = 0 / 0 = undefined, … is NaN)
_WORD_RESULT = re.compile(r"^[^.;\n]{0,24}?(?:=|\bis\b|→|\bgives\b)\s*\**\s*(?:undefined|not defined|nan|does not exist|"
                          r"∞|infinite|infinity|indeterminate)\b", re.IGNORECASE)


def _text_after(lg, span) -> str:
    """The text of logical line ``lg`` after a statement part at ``span`` (line, start, end)."""
    line, _, end = span
    for off, ln in reversed(lg.pieces):
        if ln == line:
            return lg.text[off + end:]
    return ""


# a list labelled as scores (what a softmax takes), and a list labelled as their softmax on a line below it
_SCORES_LABEL = re.compile(r"\b(?:scores?|logits?)\b[^\[(]*$", re.IGNORECASE)
_SOFTMAX_LABEL = re.compile(r"^\W*(?:softmax|attention weights)\b[^\[(]*[:=]\s*$", re.IGNORECASE)


# a list said to be the layer normalisation of a list printed just above it
_NORM_LABEL = re.compile(r"layer[ _-]?norm|\bnormali[sz]ed\b|\bx_norm\b|\bLN\b", re.IGNORECASE)
SOFTMAX_NEAR = 12  # lines between a list of scores and the softmax-labelled list (the exponentials and their sum between)
NORM_NEAR = 6  # lines between the list and its layer normalisation (a heading, a code fence between)
NORM_EPS = ("0", "1e-5", "1e-6")  # the ε a page may add to the variance


CENTRED = sp.Rational(1, 20)  # |Σ x| at most this share of Σ |x|: a list centred on zero (one slip may unbalance it)


def _centred(node) -> bool:
    """Whether the printed entries of a list sum to zero, within their rounding or :data:`CENTRED` of their size: a
    layer normalisation with no gain or shift (a row shown in part, or shifted by a learned β, is not checked as
    one)."""
    from ..read import numbers

    nums = numbers(node, signed=True)
    if not nums or len(nums) != len(node.items):
        return False
    size = sum(abs(n.value) for n in nums)
    return abs(sum(n.value for n in nums)) <= max(sum(n.half_unit(None) for n in nums), CENTRED * size)


def _layer_norms(x, y, shown_x: str, shown_y: str) -> "Conventions":
    """``y = LN(x)`` (no gain or shift, population variance) under each ε of :data:`NORM_EPS`: the statement holds
    when one of them does (:class:`Conventions`)."""
    from ..read import Bin, Call, Num, Pow

    def num(text: str):  # read by the one reader: 1e-5 is exactly 1/100000
        return Num(read_number(text))

    centred = Bin("-", x, Call("mean", x))
    var = Call("mean", Pow(centred, num("2")))
    return Conventions(Statement((Bin("/", centred, Call("sqrt", Bin("+", var, num(eps)))), y), ("≈",),
                                 (f"layernorm({shown_x}, ε={eps})", shown_y)) for eps in NORM_EPS)


# the sinusoidal positional encoding (Vaswani et al. 2017, §3.5) a page states, and the rows it prints of it
_PE_BASE = re.compile(r"(\d+)\s*\^\s*\{?\s*(?:\\[dt]?frac\s*\{\s*2\s*i\s*\}|\(?\s*2\s*i\s*/)")  # 10000^{2i/d}
_PE_ODD = re.compile(r"2\s*i\s*\+\s*1\b[^\n]*\\?cos|\bcos\b[^\n]*2\s*i\s*\+\s*1\b")  # odd 2i+1 take the cosine
_PE_WIDTH = re.compile(r"(?<![A-Za-z\\])d(?:_\{?\s*(?:\\(?:text|mathrm)\s*\{)?\s*model\s*\}?\s*\}?)?\s*=\s*(\d+)(?![\d.])")
_PE_LABEL = re.compile(r"(?<![A-Za-z])(?:PE|P)\s*(?:\(\s*(\d+)\s*\)|_\{?\s*(\d+)\s*\}?)\s*[=:]\s*$")
_PE_HEADER = (re.compile(r"^\s*(?:position|pos)\b", re.IGNORECASE),
              re.compile(r"(?<![A-Za-z])(?:P|PE)(?![A-Za-z])|positional", re.IGNORECASE))
MAX_POSITION = 100_000


@dataclass(frozen=True)
class PositionalEncoding:
    """A page's statement of the sinusoidal positional encoding, ``P_{pos,2i} = sin(pos / B^{2i/d})``,
    ``P_{pos,2i+1} = cos(pos / B^{2i/d})`` (Vaswani et al. 2017, "Attention Is All You Need", §3.5): its base
    ``B`` (10000 in the paper) as printed in the formula, and the widths ``d`` the page declares (``d = 5``,
    ``d_{\\text{model}} = 4``)."""

    base: int
    widths: frozenset

    @classmethod
    def of(cls, doc: Document) -> "PositionalEncoding | None":
        """The encoding ``doc`` states, or None: it must print the formula's base, the cosine at the odd indices
        ``2i+1`` (the interleaved layout; a page that concatenates the sines and the cosines is not read) and at
        least one width."""
        text = "\n".join(doc.lines)
        base = _PE_BASE.search(text)
        widths = frozenset(int(m.group(1)) for m in _PE_WIDTH.finditer(text))
        if not base or not _PE_ODD.search(text) or not widths or "sin" not in text:
            return None
        return cls(int(base.group(1)), widths)

    def row(self, pos: int, width: int):
        """``P_pos`` of a ``width``-dimensional encoding as a tree: entry ``j`` is the sine (``j`` even) or cosine
        (``j`` odd) of ``pos / B^{2⌊j/2⌋/width}``."""
        from ..read import Bin, Call, Pow, integer as k

        return Vec(tuple(Call("cos" if j % 2 else "sin",
                              Bin("/", k(pos), Pow(k(self.base), Bin("/", k(2 * (j // 2)), k(width)))))
                         for j in range(width)))


def _position(doc: Document, line: int, label: str) -> tuple[int, int, int] | None:
    """(position, start, end in ``label``) of the encoding row printed after ``label`` on ``line``: ``PE(1) =``,
    ``P_2:``, or the row of a table whose first column is headed "Position" and whose next column names the
    encoding (``P_i``, "PE vector", "Positional Encoding"); the span is the label's or the position cell's."""
    m = _PE_LABEL.search(label)
    if m:
        pos = int(m.group(1) or m.group(2))
        return (pos, m.start(), m.end()) if pos <= MAX_POSITION else None
    cell = re.fullmatch(r"\s*\|\s*(\d+)\s*\|\s*", label)
    table = next((t for t in doc.tables if line in t.row_lines), None)
    if not cell or table is None or int(cell.group(1)) > MAX_POSITION:
        return None
    header = [c for _, _, c in row_cells(doc.lines[table.header - 1], table.sep)]
    if len(header) < 2 or not _PE_HEADER[0].search(header[0]) or not _PE_HEADER[1].search(header[1]):
        return None
    return int(cell.group(1)), cell.start(1), cell.end(1)


def word_statements_of(doc: Document) -> list[tuple[list, list, _Logical]]:
    """Statements a page makes in words about printed lists: ([candidate statements], spans, logical line).

    * a list, the word *softmax*, then a list of the same length: the second is the softmax of the first;
    * a list, the word *probabilities* or *weights*, then a list of the same length whose entries lie in
      [0, 1]: the second is the softmax of the first, or the first normalised to sum 1 (either reading may
      hold; when neither does, the statement is left unread, as the page does not say which it means);
    * a list labelled as scores or logits (``Scaled scores: [1.25, 0, -0.625]``, or the last list of a line so
      labelled, ``Scaled scores: [10, 0, -5]/2 = [5, 0, -2.5]``) and, at most :data:`SOFTMAX_NEAR` lines below it
      with no list printed between, a line labelled softmax (``Softmax: [0.6011, 0.1711, 0.2278]``) printing a list of the same length
      with entries in [0, 1]: the second is the softmax of the first;
    * a list labelled as a layer normalisation (``layer_norm_output[1] = [...]``, or "After (layer norm):" above
      it) at most :data:`NORM_NEAR` lines below a list of the same length: its LayerNorm with no gain or shift,
      population variance, under each ε of :data:`NORM_EPS` (:class:`Conventions`);
    * on a page that states the sinusoidal positional encoding (:class:`PositionalEncoding`), a list of ``d``
      entries labelled with a position (``PE(1) = [...]``, or the row of a table headed "Position" and "P_i"):
      that row of the encoding;
    * one list on a line and ``mean = x`` (``average``, ``sum``, ``Range: ~x``, ``std``) after it: the mean (sum,
      largest minus smallest entry, standard deviation) of its entries;
    * the same statistics on a line with no list, about a list printed above it: the row a quoted label names
      (``"Hello": mean=0.25, std=0.364`` under ``[0.1, 0.3, -0.2, 0.8],  # "Hello"``), or else, on a line with no
      quoted label, the one list printed at most :data:`NEAR` lines above (``Mean: 0.250`` under ``features:
      tensor([0.1000, …])``) when no line between prints a list.
    """
    from ..read import Bin, Call

    out = []
    encoding = PositionalEncoding.of(doc)
    labelled: dict = {}  # a quoted row label ("Hello") → the one list printed on its line
    recent = None  # (line, list, span, labelled as scores, text, labelled as normalised) of the last line printing a list
    for lg in _logical_lines(doc):
        text = lg.text
        lists = _lists(text)
        for (a, a0, a1), (b, b0, b1) in zip(lists, lists[1:]):
            between = text[a1:b0]
            if len(a.items) != len(b.items) or len(a.items) < 2 or len(between) > 60:
                continue
            probs = all(0 <= _sign_value(i) <= 1 for i in b.items)
            span = [lg.where(a0) + (lg.where(a0)[1] + a1 - a0,), lg.where(b0) + (lg.where(b0)[1] + b1 - b0,)]
            soft = (f"softmax({text[a0:a1]})", text[b0:b1])
            if _SOFTMAX_WORD.search(between) and probs:
                out.append(([Statement((Call("softmax", a), b), ("≈",), soft)], span, lg))
            elif _WEIGHT_WORD.search(between) and probs:
                norm = Bin("/", a, Call("sum", a))
                out.append(([Statement((Call("softmax", a), b), ("≈",), soft),
                             Statement((norm, b), ("≈",), (f"{text[a0:a1]} / sum({text[a0:a1]})", text[b0:b1]))],
                            span, lg))
        quoted = _QUOTED.findall(text)
        if len(lists) == 1 and len(quoted) == 1:
            labelled[quoted[0][1:-1]] = lists[0][0]
        if len(lists) == 1:
            node, a0, a1 = lists[0]
            where = [lg.where(a0) + (lg.where(a0)[1] + a1 - a0,)]
            label = text[:a0]
            # "Scaled scores: [1.25, 0, -0.625]" then, on a line just below, "Softmax: [0.6011, 0.1711, 0.2278]"
            if recent and recent[3] and 0 < lg.pieces[0][1] - recent[0] <= SOFTMAX_NEAR and _SOFTMAX_LABEL.search(label) \
                    and len(recent[1].items) == len(node.items) >= 2 and all(0 <= _sign_value(i) <= 1 for i in node.items):
                out.append(([Statement((Call("softmax", recent[1]), node), ("≈",),
                                       (f"softmax({recent[4]})", text[a0:a1]))], recent[2] + where, lg))
            first = lg.pieces[0][1]
            above = " ".join(doc.lines[max(0, first - 4):first - 1])  # "**After (layer norm):**" above the list
            normed = bool(_NORM_LABEL.search(label) or _NORM_LABEL.search(above))
            if recent and 0 < first - recent[0] <= NORM_NEAR and len(recent[1].items) == len(node.items) >= 3 \
                    and normed and not recent[5] and _centred(node):  # the list above is not itself normalised
                out.append((_layer_norms(recent[1], node, recent[4], text[a0:a1]), recent[2] + where, lg))
            at = _position(doc, first, label) if encoding else None
            if at is not None and len(node.items) in encoding.widths:
                pos, p0, p1 = at
                out.append(([Statement((encoding.row(pos, len(node.items)), node), ("≈",),
                                       (f"PE({pos}) (d = {len(node.items)}, base {encoding.base})", text[a0:a1]))],
                            [lg.where(p0) + (lg.where(p0)[1] + p1 - p0,)] + where, lg))
            out += _stats(text, a1, node, where, lg)
            recent = (lg.pieces[-1][1], node, where, bool(_SCORES_LABEL.search(label)), text[a0:a1], normed)
        elif not lists:
            indent = len(text) - len(text.lstrip())
            lead = _QUOTED.match(text, indent)
            if lead and lead.group(1)[1:-1] in labelled:  # "Hello": mean=0.25, std=0.364 (its row printed above)
                node = labelled[lead.group(1)[1:-1]]
                where = [lg.where(lead.start(1)) + (lg.where(lead.start(1))[1] + lead.end(1) - lead.start(1),)]
                out += _stats(text, lead.end(1), node, where, lg)  # the label stands for its row
            elif recent and 0 < lg.pieces[0][1] - recent[0] <= NEAR and not quoted:  # Mean: 0.250 under its list
                out += _stats(text, 0, recent[1], recent[2], lg)
        else:
            recent = None
            node, a0, a1 = lists[-1]
            if _SCORES_LABEL.search(text[:lists[0][1]]):  # Scaled scores: [10, 0, -5]/2 = [5, 0, -2.5]
                where = [lg.where(a0) + (lg.where(a0)[1] + a1 - a0,)]
                recent = (lg.pieces[-1][1], node, where, True, text[a0:a1], False)
    return out


class Conventions(list):
    """Readings of one word under its conventions (a population or a sample standard deviation): the statement
    holds when one of them does, and is wrong when none does (unlike readings of what the page may mean, which
    leave the statement unread when none holds)."""


def _stats(text: str, start: int, node, where: list, lg) -> list:
    """The statistics ``mean = x`` (``average``, ``sum``, ``Range: ~x``, ``std``) stated after ``start`` about the
    printed list ``node``: [([readings], spans, lg)]. A standard deviation reads first as the population one (the
    LayerNorm convention), then as the sample one (:class:`Conventions`)."""
    from ..read import Bin, Call, Pow, Statement, integer as k

    out = []
    for m in _STAT.finditer(text, start):
        word = m.group(1).lower()
        number = _readable(m.group(4))
        shown = f"[{', '.join(show(i) for i in node.items)}]"
        span = where + [lg.where(m.start(4)) + (lg.where(m.start(4))[1] + m.end(4) - m.start(4),)]
        rel = "≈" if "≈" in (m.group(2), m.group(3)) or m.group(3) == "~" else "="
        if word in ("std", "standard deviation"):
            square = Pow(Bin("-", node, Call("mean", node)), k(2))
            population = Call("sqrt", Call("mean", square))
            sample = Call("sqrt", Bin("/", Call("sum", square), k(len(node.items) - 1)))
            out.append((Conventions([Statement((population, number), (rel,), (f"std({shown})", m.group(4))),
                                     Statement((sample, number), (rel,), (f"sample std({shown})", m.group(4)))]),
                        span, lg))
            continue
        f = {"sum": "sum", "range": "range"}.get(word, "mean")
        tree = Bin("-", Call("max", node), Call("min", node)) if f == "range" else Call(f, node)
        out.append(([Statement((tree, number), (rel,), (f"{f}({shown})", m.group(4)))], span, lg))
    return out


def _sign_value(node):
    from ..read import value

    return value(node)


# ---------------------------------------------------------------------------
# the audit
# ---------------------------------------------------------------------------


def audit_arithmetic(doc: Document, *, dps: int = 50, exact: frozenset = frozenset()) -> PageArithmetic:
    """Check every arithmetic statement of ``doc`` from its own printed operands (see the module docstring).

    Args:
        doc: a handout as :func:`symseq.read.document.read` returns it.
        dps: working digits of the rounding decisions.
        exact: the printed numbers (entries of page tokens) a derivation holds to be exact as printed (an input
            it declares, a claim whose true value is the printed number): never a rounded operand.

    Returns:
        a :class:`PageArithmetic`: each quantity token inside a checked statement is ``covered`` (or
        ``wrong``, the printed numbers a wrong link names), every other quantity token ``uncovered`` (left for a
        derivation); the numbers that are not quantities (headings, indices) are ``structural``; and the
        statements that cannot hold (:class:`Broken`: a lost number, :func:`lost_numbers`, or a value that is not
        real), each a failure of the audit.
    """
    classify(doc)
    checked, unread = [], []
    chains = list(statements_of(doc))
    words = list(word_statements_of(doc))
    if doc.format == "markdown":  # what a code block prints under print(x), against what its literals give
        from .code import code_statements

        words += [([st], spans, None) for st, spans in code_statements(doc)]
    rounded = _printed_results(chains, doc, frozenset(_key(e) for e in exact))
    not_real: list[Broken] = []
    for st, spans, lg in chains:
        try:
            links = decide(st, dps=dps, rounded=rounded(*spans[0][:2]))
        except NotRealError as exc:  # a number printed for a value that has none
            line, a, _ = spans[-1]
            if _WORD_RESULT.match(_text_after(lg, spans[-1])):  # … = 0 / 0 = undefined: says it has none
                continue
            slip = _sign_slip(doc, st, spans, rounded(*spans[0][:2]), dps)
            if slip is not None:  # √−64 = 8: without the minus sign of −64 the statement holds
                not_real.append(Broken(slip.line, slip.start, slip.end, slip.printed,
                                       f"{exc}: with {slip.correct} for {slip.printed} the statement "
                                       f"{' '.join(_join(st))} holds", slip.correct))
                continue
            not_real.append(Broken(line, spans[0][1] if spans[0][0] == line else 0, spans[-1][2],
                                   " ".join(_join(st)), f"{exc}: the statement prints a number for it"))
            continue
        except SymseqError as exc:
            if len(st.parts) < 3:
                unread.append((spans[-1][0], " ".join(_join(st)), str(exc)))
                continue
            # a head the arithmetic cannot evaluate names what the chain computes (\text{softmax}(10) = \frac{…}{…}
            # = 0.9999545): the chain is checked from its next part on
            st, spans = Statement(st.parts[1:], st.relations[1:], st.texts[1:]), spans[1:]
            try:
                links = decide(st, dps=dps, rounded=rounded(*spans[0][:2]))
            except SymseqError:
                unread.append((spans[-1][0], " ".join(_join(st)), str(exc)))
                continue
        checked.append(Checked(spans[-1][0], spans[0][0], " ".join(_join(st)), links, spans,
                               _repair(doc, st, links, spans, rounded(*spans[0][:2]), dps), st))
        for k, inner in inner_steps(st):
            try:
                inner_links = decide(inner, dps=dps, rounded=rounded(*spans[0][:2]))
            except SymseqError as exc:
                unread.append((spans[k + 1][0], " ".join(_join(inner)), str(exc)))
                continue
            part = [_within(spans[k], st.texts[k], inner.texts[0]), _within(spans[k + 1], st.texts[k + 1], inner.texts[1])]
            checked.append(Checked(spans[k + 1][0], spans[k][0], " ".join(_join(inner)), inner_links, part,
                                   _repair(doc, inner, inner_links, part, rounded(*spans[0][:2]), dps), inner))
    for readings, spans, lg in words:
        decided = []
        for st in readings:
            try:
                decided.append((st, decide(st, dps=dps, rounded=rounded(*spans[0][:2]))))
            except SymseqError as exc:
                unread.append((spans[-1][0], " ".join(_join(st)), str(exc)))
        if not decided:
            continue
        fits = [(st, links) for st, links in decided if all(k.ok for k in links)]
        if len(readings) > 1 and not fits and not isinstance(readings, Conventions):
            unread.append((spans[-1][0], " ".join(_join(decided[0][0])), "neither a softmax nor a normalisation of "
                           "the printed list; the page does not say which it means"))
            continue
        st, links = (fits or decided)[0]
        checked.append(Checked(spans[-1][0], spans[0][0], " ".join(_join(st)), links, spans, statement=st))
    taken = {c.spans[-1] for c in checked if c.status != "drift"}
    notes: list = []
    if doc.tables:  # the relations between tables (and NumPy, which screens them) only for a page with one
        from .tables import table_statements

        for st, links, (line, a, b) in table_statements(doc, dps=dps, taken=taken, notes=notes):
            checked.append(Checked(line, line, " ".join(_join(st)), links, [(line, 0, 0), (line, a, b)]))
    unread += [(0, "tables", note) for note in notes]
    checked.sort(key=lambda c: (c.line, c.first))
    _classify_tokens(doc, checked)
    from .shapes import misfits

    return PageArithmetic(doc.path, checked, doc.tokens, unread,
                          lost_numbers(doc) + not_real + numbered_runs(doc) + numbered_lists(doc) + misfits(doc)
                          + repeated_text(doc))


def audit_page(doc: Document, *, dps: int = 50):
    """The audit of a page with no derivation of it (``symseq audit FILE`` when no derivation has FILE as its
    source): its own arithmetic, checked from its printed operands (:func:`audit_arithmetic`), as an
    :class:`~symseq.audit.report.AuditReport` whose tokens only that arithmetic accounts for
    (:meth:`~symseq.audit.report.AuditReport.of_page`); a computation printed again below itself with another
    result is an erratum at the copy (:meth:`~symseq.audit.report.AuditReport.add_repeats`).

    Args:
        doc: a handout as :func:`symseq.read.document.read` returns it.
        dps: working digits of the rounding decisions.

    Returns:
        the :class:`~symseq.audit.report.AuditReport`, with no derivations and ``arithmetic`` set.
    """
    from .report import AuditReport

    rep = AuditReport.of_page(audit_arithmetic(doc, dps=dps), places=doc.where if doc.places is not None else None)
    return rep.add_repeats(doc.lines)  # a computation printed again with another result


# a statement of more single-character edits than this is not searched for its one wrong operand
REPAIR_TRIALS = 400


def _repair(doc: Document, st, links: list, spans: list, rounded, dps: int) -> Repair | None:
    """The operand to blame when a statement is wrong, or None.

    A wrong statement is put down to its result (the number its failing link prints), unless exactly one operand
    of that link, changed in one digit or its sign, makes every link hold, the page printed the changed value on
    an earlier line (a value it gave before: ``W_xh = 0.9``), and did not print the operand as it stands there
    (``(0.0 · 0.7) + (0.5 · 0.1) + 0.3 = 0.98`` after ``W_xh = 0.9``: 0.0 is the wrong number, correct 0.9, not
    0.98). A result printed wrongly (``tanh(1.1265) ≈ 0.809``) keeps the blame: its operand 1.1265 is printed
    before it (the chain computes it), so it is not suspected.

    Source: issue 13, build item 1 (which number of a wrong statement is the erratum).
    """
    from ..read import read_number

    bad = [link for link in links if not link.ok and not (link.kind == "result" and link.within_rounding)]
    if not bad or bad[0].index >= len(spans):
        return None
    k = bad[0].index
    found, trials = [], 0
    nums = numbers(st.parts[k])
    for j, n in enumerate(nums):
        for text in _one_edits(n.text):
            trials += 1
            if trials > REPAIR_TRIALS:
                return None
            m = read_number(text)
            if m is None:
                continue
            if _holds_with(st, k, with_number(st.parts[k], j, m), rounded, dps):
                found.append((j, n, text))
    if not found:
        return None
    before = [t for t in doc.tokens if t.line < min(sp[0] for sp in spans)]  # what the page printed before it
    copied = _list_copies(before, nums, found)
    if len(copied) == 1:  # the operands copy a list printed before, but for the one number edited
        found = copied
    elif len(found) != 1:
        return None
    j, n, text = found[0]
    if not copied:
        earlier = {_key(e) for t in before for e in (t.entries or (t.text,))}
        if _key(text) not in earlier or _key(n.text) in earlier:
            return None
    t = _token_of(doc, spans[k], nums, j, n)
    return None if t is None else Repair(t.line, t.start, t.end, t.text, text)


def _holds_with(st, k: int, part, rounded, dps: int) -> bool:
    """Whether statement ``st`` holds (every link) with its part ``k`` read as the tree ``part`` instead."""
    parts = list(st.parts)
    parts[k] = part
    try:
        return all(link.ok for link in decide(Statement(tuple(parts), st.relations, st.texts), dps=dps,
                                              rounded=rounded))
    except SymseqError:
        return False


def _token_of(doc: Document, span: tuple, nums: list, j: int, n):
    """The page's token of number ``n``, the ``j``-th of the numbers ``nums`` printed in ``span`` (line, start,
    end); None when it cannot be told apart."""
    line, a, b = span
    toks = [t for t in doc.tokens if t.line == line and a <= t.start and t.end <= b]
    if len(toks) == len(nums) and all(len(t.entries or (t.text,)) == 1 for t in toks):
        toks = [toks[j]]  # one token per printed number, in reading order
    else:
        toks = [t for t in toks if _key(t.text) == _key(n.text)]
    return toks[0] if len(toks) == 1 and _key(toks[0].text) == _key(n.text) else None


def _sign_slip(doc: Document, st, spans: list, rounded, dps: int) -> Repair | None:
    """For a statement that prints a number for a value that is not real (``\\sqrt{-64} = 8``): the one operand
    whose minus sign, removed, makes every link hold, with its number unsigned as the correction; None when no
    operand, or more than one, does."""
    found = []
    for k, part in enumerate(st.parts[:len(spans)]):
        nums = numbers(part)
        for j, n in enumerate(nums):
            node = without_sign(part, j)
            if node is not None and _holds_with(st, k, node, rounded, dps):
                found.append((k, j, n, nums))
    if len(found) != 1:
        return None
    k, j, n, nums = found[0]
    t = _token_of(doc, spans[k], nums, j, n)
    return None if t is None else Repair(t.line, t.start, t.end, t.text, _key(t.text))


def _list_copies(before: list, nums: list, found: list) -> list:
    """The repairs of ``found`` ((index, number, edit)) after which the operands ``nums`` hold a list printed as one
    of the tokens ``before`` (three entries or more, signs aside) where the edited number stands: in
    ``(0.2 + 0.3 + (-0.2) + 0.8) / 4`` after ``[0.1, 0.3, -0.2, 0.8]``, 0.2 → 0.1 and not 0.3 → 0.2."""
    lists = {tuple(_key(e) for e in t.entries) for t in before if t.entries and len(t.entries) >= 3}
    keys = [_key(x.text) for x in nums]
    out = []
    for j, n, text in found:
        mended = keys[:j] + [_key(text)] + keys[j + 1:]
        if any(tuple(mended[i:i + len(L)]) == L for L in lists for i in range(max(0, j - len(L) + 1), j + 1)):
            out.append((j, n, text))
    return out


def _one_edits(text: str) -> list[str]:
    """``text`` (a printed number) with one digit of its mantissa changed, or its sign flipped."""
    t = text.replace("−", "-")
    mant_end = len(t) if "e" not in t.lower() else t.lower().index("e")
    out = []
    for i in range(mant_end):
        if t[i].isdigit():
            out += [t[:i] + d + t[i + 1:] for d in "0123456789" if d != t[i]]
    out.append(t[1:] if t.startswith("-") else "-" + t)
    return out


def _printed_results(chains, doc: Document | None = None, exact: frozenset = frozenset()):
    """``rounded(line, column)``: the predicate :func:`~symseq.verify.steps.decide` takes for a statement that
    starts at ``column`` of ``line``: a printed operand may be a rounded value only when the page printed the same
    number as a result (:func:`~symseq.read.tree.result_parts`) before it (on an earlier line, or earlier on the
    same line: ``z = … = 0.864 ⇒ σ(0.864) ≈ 0.704``), and that result is not exact (``√0.25 = 0.5`` prints 0.5 in
    full), or printed it right after ``≈`` (``A_{6,:} ≈ (0.185, 0.146, …)``). Any other printed number is an
    input, exact as printed: ``0.3×0.1+0.4×0.3+0.1×0.6=0.13`` is wrong (the sum is 0.21), not "within the
    rounding" of inputs read as ±0.05. A decimal list printed after the last ``=`` of a line whose left side cannot
    be read (``o = softmax(\\cdots) = [0.2118, 0.2584, …]``) is a result too."""
    first: dict = {}  # a number's text → (line, column) where the page first prints it as a result

    def note(text: str, line: int, column: int = 0):
        key = _key(text)
        first[key] = min(first.get(key, (line, column)), (line, column))

    for i, text in enumerate(doc.lines if doc is not None else (), start=1):
        for t in _after_approx(text):  # x ≈ 0.185, A ≈ (0.185, 0.146): a value the page says it rounded
            for e in t.entries:
                note(e, i, t.start)
        m = _ELIDED_RESULT.search(text)
        if m and all(read_number(e) is not None for e in m.group(1).split(",")):
            for e in m.group(1).split(","):
                n = read_number(e)
                if n is not None and n.has_point and not n.percent and not is_scientific(n):
                    note(e.strip(), i, m.start(1))
    read = {(line, a) for _, spans, _ in chains for line, a, _ in spans}  # parts the loop below decides
    for lg in _logical_lines(doc) if doc is not None else ():  # results the statements do not read
        for line, column, entries in _results_after_relations(lg):
            if (line, column) not in read:
                for e in entries:
                    note(e, line, column)
    def rounded(line: int, column: int = 0):
        return lambda number: _key(number.text) not in exact and first.get(_key(number.text), (line, column)) < (
            line, column)

    for st, spans, lg in sorted(chains, key=lambda c: tuple(c[1][0][:2]) if c[1] else (0, 0)):
        start = tuple(spans[0][:2]) if spans else (0, 0)
        for k in result_parts(st):  # (an operand a derivation holds exact is exact here too: 0.2 of Q = XW_Q)
            if k < len(spans) and not exact_result(st, k, rounded(*start)):
                for n in numbers(st.parts[k]):
                    note(n.text, spans[k][0], spans[k][1])

    return rounded


# what shows that the text before a relation computed its value: an operator, a function applied (softmax(…), not
# a label such as "Query (sitting)"), an ellipsis
_COMPUTED = re.compile(r"[+*/·×⊙∘^√²]|(?<![\w.])-|[A-Za-z]\(|\\(?:frac|sqrt|cdot|times|sum|odot)|\.\.\.|…|\\[lc]?dots")
_GOES_ON = re.compile(r"\s*(?:[-+*/·×^−√]|\\(?:cdot|times|frac|sqrt)|\d)|[(\[]")  # an operand, not a printed value
NAMED_DECIMALS = 3  # an entry of a named value printed with at least this many decimals is a rounded result


def _results_after_relations(lg) -> list[tuple[int, int, list[str]]]:
    """(line, column, entries) of each number or list a logical line prints right after ``=`` or ``≈``, taken as a
    result the page rounded: after a computation (``σ² = ((0.1474 − 0.035146)² + … )/16 = 0.008837``, even one
    the grammar cannot read), or, as the value of a name (``multi_head_output[0] = [0.0016, 0.0317, …]``), the
    entries printed with :data:`NAMED_DECIMALS` decimals or more, which no input is typed with."""
    text = lg.text
    rels = list(_REL.finditer(text))
    out = []
    for i, m in enumerate(rels):
        before = text[rels[i - 1].end() if i else 0:m.start()]
        after = text[m.end():]
        end = rels[i + 1].start() - m.end() if i + 1 < len(rels) else len(after)
        toks = [t for t in scan(after[:end]) if t.kind in ("number", "vector", "matrix")]
        if not toks or after[:toks[0].start].strip() not in ("", "[", "(", "[[") \
                or _GOES_ON.match(after, toks[0].end, end):
            continue  # not a printed value: the first operand of an expression (= 0.3×0.1 + …)
        # a list printed whole, or one whose rows go on to the next lines (its numbers one by one)
        printed = toks[:1] if not after[:toks[0].start].strip() else [t for t in toks if t.kind == "number"]
        computed = bool(_COMPUTED.search(before.strip()))
        for t in printed:
            entries = [e for e in t.entries
                       if computed or ("." in e and len(e.split(".")[-1].rstrip("%")) >= NAMED_DECIMALS)]
            if entries:
                line, col = lg.where(m.end() + t.start)
                out.append((line, col, entries))
    return out


_APPROX = re.compile(r"(?:≈|≃|\\approx(?![A-Za-z])|\\simeq(?![A-Za-z]))\s*")


def _after_approx(text: str) -> list:
    """The number or list of numbers printed right after each ``≈`` of a line (page tokens)."""
    if not _APPROX.search(text):
        return []
    starts = {m.end() for m in _APPROX.finditer(text)}
    return [t for t in scan(text) if t.start in starts and t.kind in ("number", "vector", "matrix")]


# f(\cdots) = [0.2118, 0.2584, ...]: a result list whose computation the page elides
_ELIDED_RESULT = re.compile(r"(?:\\cdots|\\ldots|\\dots|…)\s*\)\s*=\s*\[([^\[\]=]+)\]")


def _key(text: str) -> str:
    return text.lstrip("+-−")


def _bare(text: str) -> str:
    """A printed number or list without its spacing (``[1, 0, 1]`` and ``[1,0,1]`` are one print)."""
    return re.sub(r"\s+", "", text).replace("−", "-")


def _within(span: tuple, printed: str, text: str) -> tuple:
    """The span of ``text`` inside a part printed as ``printed`` at ``span``, when it occurs there once (else the
    part's span): where an inner step's result is printed."""
    line, a, b = span
    at = printed.find(text)
    if at < 0 or printed.find(text, at + 1) >= 0:
        return span
    return (line, a + at, a + at + len(text))


def _join(st: Statement) -> list[str]:
    out = [st.texts[0].strip()]
    for rel, t in zip(st.relations, st.texts[1:]):
        out += [rel, t.strip()]
    return out


def _classify_tokens(doc: Document, checked: list[Checked]) -> None:
    """Attribute every token of ``doc`` by the statements ``checked``: ``wrong`` the numbers a wrong statement is put
    down to, ``covered`` the others inside a decided statement, ``uncovered`` a number no statement decides (with
    :data:`~symseq.audit.attribution.WITHIN_ROUNDING` inside a statement only a derivation can decide),
    ``structural`` a number that is not a quantity."""
    by_line: dict[int, list] = {}
    repaired = {(c.repair.line, c.repair.start): c for c in checked if c.repair is not None and c.status == "wrong"}
    for c in checked:
        for k, (line, a, b) in enumerate(c.spans):
            failing = [link for link in c.links if not link.ok and link.index + 1 == k]
            bad = c.status == "wrong" and c.repair is None and bool(failing)
            # a rewrite wrong at one number printed inside it (Link.inner): that number alone, not its neighbours
            only = {_bare(link.inner.printed[i]) for link in failing if link.inner is not None for i in link.inner.wrong}
            at = [link.inner.at for link in failing if link.inner is not None and link.inner.at is not None]
            if at and bad:  # the at-th number of the part, where the part prints one token per number
                toks = [t for t in doc.tokens if t.line == line and a <= t.start and t.end <= b]
                if len(toks) > at[0] and all(len(t.entries or (t.text,)) == 1 for t in toks):
                    only = {("at", toks[at[0]].start)}
            by_line.setdefault(line, []).append((a, b, bad, c, only))
            while b > len(doc.lines[line - 1]) and line < len(doc.lines):  # a list printed over several lines
                b -= len(doc.lines[line - 1]) + 1  # (its logical line joins them with one space)
                line += 1
                by_line.setdefault(line, []).append((0, b, bad, c, only))
    for t in doc.tokens:
        if (t.line, t.start) in repaired:  # the one operand whose edit of a digit (or sign) makes it hold
            c = repaired[t.line, t.start]
            t.attribution = Attribution("wrong", PageStatement(c.line, c.text, c.repair.correct, c.repair.printed))
            continue
        hit = next(((bad and (not only or ("at", t.start) in only or bool({_bare(t.text), *map(_bare, t.entries)} & only)), c)
                    for a, b, bad, c, only in by_line.get(t.line, ()) if a <= t.start and t.end <= b), None)
        if t.tier == HARD or (t.tier and hit is None):
            t.attribution = Attribution("structural", Rule(t.rule))
        elif hit is None:
            t.attribution = Attribution("uncovered")
        elif hit[1].status == "drift":
            t.attribution = Attribution("uncovered", PageStatement(hit[1].line, hit[1].text), WITHIN_ROUNDING)
        else:
            t.attribution = Attribution("wrong" if hit[0] else "covered", PageStatement(hit[1].line, hit[1].text))
