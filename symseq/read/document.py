"""A handout as the audit reads it: lines, headings, tables, code, references and numeric tokens.

Plain text, Markdown and LaTeX sources are read the same way after a little
format-specific preparation (LaTeX comments are dropped, Markdown fences and
LaTeX ``verbatim``/``lstlisting`` blocks are code). Notebooks (``.ipynb``) and
HTML pages are first rendered into lines by :mod:`symseq.read.formats`, which
says which lines are code, printed output or Markdown, and where each line is in
the file (:meth:`Document.where`: "cell 7, line 3", "HTML line 212"). The layout
found here is what locates claims: a heading line per section, a table per
``Table N`` caption (tab-separated rows, Markdown pipe rows or LaTeX ``tabular``
rows), and the code and reference lines whose numbers are not quantities.

Headings are *marked* (``# 4 The forward pass``, a setext underline, a lone
``**bold**`` line, ``\\section{…}``, an HTML ``h1``–``h6``) or *plain*: a short line
standing alone between blank lines ("4. The forward pass by hand"), the only kind
a text file has. Markdown reads both, so that a handout's headings do not depend on the
suffix it is saved with; a section is placed at a plain heading only where no
marked one names it (:func:`symseq.read.sections.locate`).
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..errors import AuditError, FileSystemError
from . import formats
from .formats import FORMATS, Rendering
from .page import Token, WordNumber, scan, scan_words

_CAPTION = re.compile(r"^\s*(?:\\caption\{\s*)?(Table|Figure)\s+(\d+)\s*[:.]", re.IGNORECASE)
# a notebook cell named by a claim's location: "In [11]", "Out[11]" (its execution count) or "cell 26"
_CELL_NAME = re.compile(r"(?<!\w)(?:(?:In|Out)\s?\[\s*(\d+)\s*\]|[Cc]ell\s+(\d+)\b)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_MD_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_MD_STRONG = re.compile(r"^(\*\*|__)([^*_].*?)\1[:.]?$")
# Markdown block syntax that is not a heading line: quote, table row, HTML, image, bullet, thematic break
_MD_BLOCK = re.compile(r"^(?:>|\||<|!\[|[-+*]\s|(?:[-*_]\s*){3,}$)")
_TEX_HEADING = re.compile(r"\\(?:part|chapter|section|subsection|subsubsection|paragraph)\*?\{(.*)\}")
_STRONG_CODE = re.compile(
    r"^\s*(import \w|from [\w.]+ import |def \w+\(|class \w+[(:]|assert |print\(|return\b|for \w+(, \w+)* in |"
    r"while .*:$|with .*:$|if .*:$|elif .*:$|else:$|try:$|except\b|@\w+|>>> |\$ )"
)
# an assignment: x = …, W[0] += …, a, b = …
_ASSIGN = re.compile(r"^[\w.\[\], ]+(?:[^\S ]\s*)?[-+*/]?=\s*\S")  # (the spaces before = are the name's: linear)
_CALL = re.compile(r"[\w.\]]+\([^()]*\)?")
# names = module.function(...) / a, b = self.f(x).split(...): an assignment from a dotted call
_ASSIGN_CALL = re.compile(r"^\s*\w+(?:\.\w+|\[[^\]]*\])*(?:\s*,\s*\w+(?:\.\w+)*)*\s*=\s*(?:\w+\.)+\w+\(")


@dataclass
class Table:
    """A table of the handout: its label ("Table 13", or "" without a caption) and its lines."""

    label: str
    caption: int | None  # caption line (1-based) or None
    header: int  # the first row line (column labels)
    rows: list[int]  # data row lines, in order
    sep: str  # cell separator: tab, | or &

    @property
    def first(self) -> int:
        return self.caption if self.caption is not None else self.header

    @property
    def last(self) -> int:
        return self.rows[-1] if self.rows else self.header

    def lines(self) -> range:
        return range(self.first, self.last + 1)

    @functools.cached_property
    def row_lines(self) -> frozenset:
        """The data row lines as a set (for membership tests per token)."""
        return frozenset(self.rows)


@dataclass
class Heading:
    """A heading line (1-based) and its text; ``marked`` when the source's markup says it is one (not plain)."""

    line: int
    text: str
    marked: bool = False


@dataclass
class Document:
    """A handout's text and layout; ``tokens`` in reading order, ``words`` the numbers written as words.

    ``lines`` are what the audit numbers (from 1) in every format; for a notebook or an HTML page they are the
    rendered lines of :mod:`symseq.read.formats`, and ``places`` gives each its place in the file (None for the
    blank lines put between cells): reports name a line by :meth:`where`."""

    path: Path
    format: str  # text, markdown, latex, notebook or html
    lines: list[str]
    tokens: list[Token] = field(default_factory=list)
    words: list[WordNumber] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    code: set = field(default_factory=set)
    references: set = field(default_factory=set)
    paragraphs: list[tuple[int, int]] = field(default_factory=list)
    output: set = field(default_factory=set)  # printed results of a notebook's code cells or an HTML pre block
    places: list | None = None  # formats.Place (or None) per line, for a notebook or HTML page
    rendering: Rendering | None = field(default=None, repr=False, compare=False)  # what the lines were read as
    _markdown: frozenset = field(default=frozenset(), repr=False, compare=False)
    _cells: dict | None = field(default=None, repr=False, compare=False)
    _table_index: tuple | None = field(default=None, repr=False, compare=False)
    _separators: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.lines)

    def line(self, i: int) -> str:
        return self.lines[i - 1]

    def markup(self, i: int) -> str:
        """The markup line ``i`` is read with: latex, markdown (a Markdown file; a notebook's markdown cells; an
        HTML page's headings) or text."""
        if self.format in ("latex", "markdown", "text"):
            return self.format
        return "markdown" if i in self._markdown else "text"

    def cell_range(self, at: str) -> tuple[int, int] | None:
        """The lines (first, last) of the notebook cell that a claim's location names, or None (not a notebook, or
        no cell named): ``In [11]`` or ``Out[11]`` names the code cell run as the 11th (its source and output),
        ``cell 26`` the 26th cell of the notebook (:class:`~symseq.read.formats.Place`)."""
        if self.places is None or self.format != "notebook":
            return None
        m = _CELL_NAME.search(at)
        if m is None:
            return None
        if self._cells is None:
            cells: dict = {}
            for k, p in enumerate(self.places, start=1):
                if p is not None:
                    for key in (("cell", p.cell), ("run", p.prompt)):
                        a, _ = cells.get(key, (k, k))
                        cells[key] = (a, k)
            self._cells = cells
        key = ("run", int(m.group(1))) if m.group(1) else ("cell", int(m.group(2)))
        return self._cells.get(key)

    def where(self, line: int) -> str:
        """Where line ``line`` is, as its author finds it: ``line 12`` in a text, Markdown or LaTeX file; the
        :class:`~symseq.read.formats.Place` of a rendered line (``cell 7, line 3``, ``cell 7, output line 2``,
        ``HTML line 212``); a blank line put between two cells is named by the next line that has a place."""
        if self.places is None or not 1 <= line <= len(self.places):
            return f"line {line}"
        for k in range(line - 1, len(self.places)):
            if self.places[k] is not None:
                return str(self.places[k])
        return f"line {line}"

    def table_at(self, line: int) -> Table | None:
        """The first table whose lines hold ``line`` (from an index built once: asked for every line)."""
        if self._table_index is None or self._table_index[0] != len(self.tables):
            index: dict[int, Table] = {}
            for t in self.tables:
                for k in t.lines():
                    index.setdefault(k, t)
            self._table_index = (len(self.tables), index)
        return self._table_index[1].get(line)

    def table(self, label: str) -> Table | None:
        want = _norm_label(label)
        return next((t for t in self.tables if t.label and _norm_label(t.label) == want), None)

    def paragraph_of(self, line: int) -> tuple[int, int]:
        return next(((a, b) for a, b in self.paragraphs if a <= line <= b), (line, line))

    def cell_index(self, token: Token) -> int | None:
        """The cell (0-based) of a token in a table row, or None outside tables."""
        t = self.table_at(token.line)
        if t is None or token.line == t.caption:
            return None
        key = (token.line, t.sep)
        if key not in self._separators:  # the separators' columns, found once per line (asked for every token)
            self._separators[key] = _separators(self.line(token.line), t.sep)
        where = self._separators[key]
        count = bisect.bisect_left(where, token.start)
        return max(count - 1, 0) if t.sep == "|" else count


def _norm_label(label: str) -> str:
    return re.sub(r"\s+", " ", label.strip().lower())


def row_cells(text: str, sep: str) -> list[tuple[int, int, str]]:
    """(start, end, text without its surrounding blanks) of each cell of a table row, between its separators
    (:func:`_separators`); a Markdown row's outer pipes open and close it and hold no cell."""
    cuts = [-1] + _separators(text, sep) + [len(text)]
    cells = [(a + 1, b, text[a + 1:b].strip()) for a, b in zip(cuts, cuts[1:])]
    if sep == "|" and text.strip().startswith("|"):
        cells = cells[1:]
    if sep == "|" and text.strip().endswith("|"):
        cells = cells[:-1]
    return cells


def _separators(text: str, sep: str) -> list[int]:
    """The columns of the cell separators of a table row (an escaped ``\\&`` is none), in order."""
    if sep == "&":
        return [m.start() for m in re.finditer(r"(?<!\\)&", text)]
    return [k for k, c in enumerate(text) if c == sep]


SIZE_LIMIT = 500_000
"""The largest handout the audit reads, in bytes of a file or characters of a text: four times the largest seed
handout (121 kB). The audit's time grows about linearly with the text, up to about a millisecond per number against
the largest derivations, so a larger file is refused at once rather than audited for many minutes: split it at a
heading and audit the parts.

A notebook or an HTML page is rendered first (:mod:`symseq.read.formats`): its file may be up to
:data:`RAW_LIMIT` bytes (a page saved from a browser carries its styles and scripts, a notebook its images), and
the text it renders to is held to ``SIZE_LIMIT``."""

RAW_LIMIT = 8 * SIZE_LIMIT
"""The largest notebook or HTML file the audit reads, in bytes; the text rendered from it is held to
:data:`SIZE_LIMIT`."""


def read(path: str | Path, *, fmt: str | None = None) -> Document:
    """Read a handout file into a :class:`Document` with its numeric tokens.

    ``fmt`` is one of :data:`~symseq.read.formats.FORMATS` (text, markdown, latex, notebook, html); by default
    it follows the file's suffix (:data:`~symseq.read.formats.SUFFIXES`: .ipynb → notebook, .html/.htm → html,
    .md → markdown, .tex → latex, any other → text).

    Raises:
        AuditError: when the file does not exist, is not a regular file, is larger than :data:`SIZE_LIMIT`
            bytes (decided from its size, before reading), is not UTF-8 text, or is a notebook nbformat cannot
            read (not JSON, an unknown nbformat version, a cell that is not one).
        FileSystemError: when the operating system refuses to read it (permissions).
    """
    path = Path(path)
    limit = RAW_LIMIT if (fmt or formats.format_of(path)) in formats.RENDERED else SIZE_LIMIT
    if not path.exists():
        raise AuditError(f"no handout at {path}; give the path of a text, Markdown, LaTeX, notebook or HTML file")
    if not path.is_file():
        raise AuditError(f"{path} is not a regular file; give the path of a text, Markdown, LaTeX, notebook or "
                         f"HTML file")
    try:
        size = path.stat().st_size
        if size > limit:
            raise AuditError(_too_large(path, f"{size:,} bytes", limit))
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise FileSystemError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew since its size was read
        raise AuditError(_too_large(path, f"more than {limit:,} bytes", limit))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuditError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                         f"save it as UTF-8 to audit it") from exc
    return parse(text, path=path, fmt=fmt)


def _too_large(path, size: str, limit: int = SIZE_LIMIT) -> str:
    name = "SIZE_LIMIT" if limit == SIZE_LIMIT else "RAW_LIMIT"
    return (f"{path} has {size}; the audit reads handouts of at most {limit:,} bytes ({name} in "
            f"symseq.read.document): split it at a heading and audit the parts")


def parse(text: str, *, path: str | Path = "<text>", fmt: str | None = None) -> Document:
    """A :class:`Document` from the text of a file already read (see :func:`read`): for a notebook, its JSON;
    for an HTML page, its markup.

    Raises:
        AuditError: for an unknown ``fmt``, a text longer than :data:`SIZE_LIMIT` characters (a notebook or page
            longer than :data:`RAW_LIMIT`, or rendering to more than ``SIZE_LIMIT``), or a notebook that cannot
            be read.
    """
    path = Path(path)
    if fmt is None:
        fmt = formats.format_of(path)
    if fmt not in FORMATS:
        raise AuditError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    limit = RAW_LIMIT if fmt in formats.RENDERED else SIZE_LIMIT
    if len(text) > limit:
        raise AuditError(_too_large(path, f"{len(text):,} characters", limit))
    if fmt in formats.RENDERED:
        text = text[1:] if text.startswith("\ufeff") else text  # a byte-order mark some editors write first
        rendering = formats.notebook(text, path) if fmt == "notebook" else formats.html(text, path)
        size = sum(len(ln) + 1 for ln in rendering.lines)
        if size > SIZE_LIMIT:
            raise AuditError(_too_large(path, f"{size:,} characters of text"))
        return layout(path, fmt, rendering=rendering)
    lines = text.splitlines()
    if fmt == "latex":
        lines = [re.sub(r"(?<!\\)%.*$", "", ln) for ln in lines]
    return layout(path, fmt, lines)


def layout(path: Path, fmt: str, lines: list[str] | None = None, *, rendering: Rendering | None = None) -> Document:
    """The :class:`Document` of ``lines`` read as ``fmt``: for a notebook or HTML page, of the lines of its
    ``rendering`` (or of ``lines`` given in their stead, the rendering's line for line: an edited copy)."""
    if rendering is not None and lines is None:
        lines = rendering.lines
    doc = Document(path, fmt, lines)
    if rendering is not None:
        doc.rendering, doc.places = rendering, rendering.places
        doc._markdown = frozenset(k for a, b in rendering.markdown for k in range(a, b + 1))
        doc.code = _rendered_code(lines, rendering)
        doc.output = set(rendering.output) | {k for a, b in rendering.pre for k in range(a, b + 1)} - doc.code
    else:
        doc.code = _code_lines(lines, fmt)
    doc.paragraphs = _paragraphs(lines)
    doc.headings = _headings(doc)
    doc.tables = _tables(doc)
    doc.references = _reference_lines(lines)
    for i, ln in enumerate(lines, start=1):
        toks = scan(ln, i)
        for t in toks:
            t.context = _context(ln, t.start, t.end)
        doc.tokens.extend(toks)
        if i not in doc.code:
            doc.words.extend(scan_words(ln, i))
    return doc


def relayout(doc: Document, lines: list[str]) -> Document:
    """``doc`` with its lines replaced by ``lines`` (as many, edited in place), read again in its format and
    with its rendering: how an edited copy of a notebook or page is audited (:mod:`symseq.audit.mutate`)."""
    if doc.rendering is not None:
        return layout(doc.path, doc.format, list(lines), rendering=doc.rendering)
    return parse("\n".join(lines), path=doc.path, fmt=doc.format)


def _rendered_code(lines, r: Rendering) -> set:
    """The code lines of a rendered notebook or page: its code cells and ``pre`` blocks of code, the fences and
    code lines of its markdown cells (as a Markdown file's), and each ``pre`` block without a language whose
    lines read as code (the rule of an unlabelled Markdown fence)."""
    code = set(r.code)
    for a, b in r.markdown:
        code.update(a + k - 1 for k in _code_lines(lines[a - 1:b], "markdown"))
    for a, b in r.pre:
        if any(_codelike(lines[k - 1]) for k in range(a, b + 1)):
            code.update(range(a, b + 1))
    return code


def _context(line: str, start: int, end: int, width: int = 48) -> str:
    a = max(0, start - width)
    b = min(len(line), end + width)
    left = line[a:start]
    if a > 0 and " " in left:
        left = left[left.index(" ") + 1:]
    right = line[end:b]
    if b < len(line) and " " in right:
        right = right[:right.rindex(" ")]
    return (("…" if a > 0 else "") + left + "⟨" + line[start:end] + "⟩" + right
            + ("…" if b < len(line) else "")).replace("\t", " ⇥ ")


def _paragraphs(lines) -> list[tuple[int, int]]:
    out, start = [], None
    for i, ln in enumerate(lines, start=1):
        if ln.strip():
            start = start or i
        elif start:
            out.append((start, i - 1))
            start = None
    if start:
        out.append((start, len(lines)))
    return out


class Fence(NamedTuple):
    """A fenced block of a Markdown page: its language (lower case, "" for none), the lines (from 1) of its opening
    and closing fences, and whether it closes (an unclosed fence runs to the end of the page: ``end`` is one past
    the last line)."""

    lang: str
    start: int
    end: int
    closed: bool

    @property
    def body(self) -> range:
        """The lines inside the fences."""
        return range(self.start + 1, self.end)


def fences(lines) -> list[Fence]:
    """The fenced blocks (```` ``` ````) of the lines of a Markdown page, in order."""
    out, start, lang = [], None, ""
    for i, ln in enumerate(lines, start=1):
        s = ln.strip()
        if not s.startswith("```"):
            continue
        if start is None:
            start, lang = i, s[3:].strip().lower()
        else:
            out.append(Fence(lang, start, i, True))
            start = None
    if start is not None:
        out.append(Fence(lang, start, len(lines) + 1, False))
    return out


def _code_lines(lines, fmt) -> set:
    code = set()
    if fmt == "markdown":
        for f in fences(lines):
            code.update(f.body, (f.start, f.end) if f.closed else (f.start,))
            if f.closed and f.lang in _OUTPUT_FENCES and not any(_codelike(lines[j - 1]) for j in f.body):
                code.difference_update(f.body)  # a block of printed output: its numbers are results
    if fmt == "latex":
        verb = False
        for i, ln in enumerate(lines, start=1):
            s = ln.strip()
            if re.match(r"\\begin\{(verbatim|lstlisting|minted|Verbatim)\}", s):
                verb = True
            if verb:
                code.add(i)
            if re.match(r"\\end\{(verbatim|lstlisting|minted|Verbatim)\}", s):
                verb = False
        return code
    # plain text: a strong code line opens a block; weak lines (assignments, indented continuations) stay in it
    in_block = False
    for i, ln in enumerate(lines, start=1):
        if i in code:
            continue
        s = ln.strip()
        if not s:
            continue
        if (_STRONG_CODE.match(ln) or _ASSIGN_CALL.match(ln)) and not _prose(s):
            code.add(i)
            in_block = True
        elif in_block and _weak_code(ln):
            code.add(i)
        else:
            in_block = False
    return code


_OUTPUT_FENCES = ("", "text", "txt", "output", "plaintext")


def _codelike(ln: str) -> bool:
    """A line of a program rather than of its printed output: a statement, an assignment, a call on its own."""
    s = ln.strip()
    return bool(_STRONG_CODE.match(ln) or _ASSIGN_CALL.match(ln) or _ASSIGN.match(s)
                or re.match(r"^[A-Za-z_][\w.]*\(", s) and not re.match(r"^(?:tensor|array)\(", s))


def _prose(s: str) -> bool:
    """A sentence rather than code: several plain words and a full stop."""
    if s.startswith("#"):
        return False
    words = re.findall(r"[A-Za-z]{2,}", s)
    return len(words) >= 8 and s.endswith(".") and "(" not in s[:20]


def _weak_code(ln: str) -> bool:
    s = ln.strip()
    if _prose(s):
        return False
    return bool(_ASSIGN.match(s) or ln.startswith((" ", "\t")) or _CALL.match(s)
                or s.startswith(("#", ")", "]", "}")))


def _headings(doc: Document) -> list[Heading]:
    """Marked headings (Markdown ``#`` and setext headings and lone bold lines, LaTeX sectioning commands, HTML
    ``h1``–``h6``) and plain ones (:func:`_plain_heading`, in text and Markdown), in line order. A line of code,
    or of a notebook's (or a page's ``pre``) printed output, is none: "Final output y: 3.4827" alone is a
    result."""
    out = []
    lines = doc.lines
    setext = set()
    for i, ln in enumerate(lines, start=1):
        s = ln.strip()
        if not s or i in doc.code or i in setext or i in doc.output:
            continue
        markup = doc.markup(i)
        if markup == "latex":
            m = _TEX_HEADING.search(ln)
            if m:
                out.append(Heading(i, m.group(1).strip(), marked=True))
            continue
        if markup == "markdown":
            m = _MD_HEADING.match(ln)
            if m:
                out.append(Heading(i, m.group(1).strip(), marked=True))
                continue
            prev_blank = i == 1 or not lines[i - 2].strip()
            if i < len(lines) and i + 1 not in doc.code and doc.markup(i + 1) == "markdown" \
                    and _MD_SETEXT.match(lines[i]) and prev_blank \
                    and not _MD_BLOCK.match(s) and "\t" not in ln:
                out.append(Heading(i, s, marked=True))
                setext.add(i + 1)
                continue
            m = _MD_STRONG.match(s)
            if m and _plain_heading(lines, i, m.group(2).strip()):
                out.append(Heading(i, m.group(2).strip(), marked=True))
                continue
            if _MD_BLOCK.match(s):
                continue
        if _plain_heading(lines, i, s):
            out.append(Heading(i, s))
    return out


_QUANTITY_LINE = re.compile(r"=|[\[(]\s*[-−]?\.?\d")


def _plain_heading(lines, i: int, s: str) -> bool:
    r"""Line ``i`` (stripped text ``s``) stands alone between blank lines and reads as a title: short, no
    closing punctuation but a question mark, not a bullet, a display equation, a caption or a numbered
    sentence ("1. Write down …." is a list item, "4. The forward pass by hand" a title). A line holding ``=``
    or a bracketed number (``d_k = 4``, ``Shape: [3, 4]``) states a quantity and is never a heading; nor is a
    bold line that does (Markdown ``**Step 2: z = …**``). Headings marked by ``#`` or ``\section`` are the
    author's own markup and are taken as they are."""
    ln = lines[i - 1]
    if _QUANTITY_LINE.search(s):
        return False  # "d_k = 4", "Shape: [3, 4]": a line that states a quantity is never a heading
    prev_blank = i == 1 or not lines[i - 2].strip()
    next_blank = i == len(lines) or not lines[i].strip()
    if not (prev_blank and next_blank) or "\t" in ln or len(s) > 110 or _CAPTION.match(s):
        return False
    if s.endswith((".", ",", ";", "?", ":", "!")) and not s.endswith("?") or len(s.split()) > 16:
        return False
    return not (s.startswith(("•", "-", "*", "\\[", "$$", "\\(")) or re.match(r"^\d+\.\s.*\.$", s))


def _tables(doc: Document) -> list[Table]:
    lines = doc.lines
    tables, i, count = [], 0, 0
    captions = {}
    for k, ln in enumerate(lines, start=1):
        m = _CAPTION.match(ln)
        if m and m.group(1).lower() == "table":
            captions[k] = f"Table {m.group(2)}"
    n = len(lines)
    while i < n:
        ln = lines[i]
        sep = None
        if doc.format == "latex" and re.search(r"\\begin\{(tabular|longtable|array)\*?\}", ln) and \
                "\\begin{array}" not in ln:
            sep = "&"
        elif "\t" in ln and (i + 1) not in doc.code:
            sep = "\t"
        elif doc.markup(i + 1) == "markdown" and ln.lstrip().startswith("|"):
            sep = "|"
        if sep is None:
            i += 1
            continue
        start = i
        if sep == "&":
            j = i + 1
            while j < n and not re.search(r"\\end\{(tabular|longtable|array)\*?\}", lines[j]):
                j += 1
            rows = [k + 1 for k in range(i + 1, j) if "&" in lines[k]]
            i = j + 1
        else:
            j = i
            while j < n and (("\t" in lines[j]) if sep == "\t" else lines[j].lstrip().startswith("|")):
                j += 1
            rows = [k + 1 for k in range(i, j) if not re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", lines[k])]
            i = j
        if not rows:
            continue
        count += 1
        caption = next((k for k in range(start, max(start - 4, 0), -1) if k in captions), None)
        if caption is None and sep == "&":
            cap = next((k for k in range(max(start - 6, 1), min(i + 6, n) + 1)
                        if re.search(r"\\caption\{", lines[k - 1])), None)
            label = f"Table {count}"
            caption = cap
        else:
            label = captions.get(caption, "") if caption else ""
        tables.append(Table(label, caption, rows[0], rows[1:], sep))
    return tables


def _reference_lines(lines) -> set:
    """Bibliography entries and further-reading bullets: their numbers are years, pages and identifiers."""
    out = set()
    for i, ln in enumerate(lines, start=1):
        s = ln.strip()
        if not s:
            continue
        bullet = bool(re.match(r"^([•*-]|\[\d+\])\s", s))
        cited = "et al." in s or bool(re.search(r"\b(19|20)\d\d\b", s))
        entry = bool(re.match(r"^[A-Z][\w'-]+, [A-Z][\w.-]*", s)) and bool(re.search(r"\b(19|20)\d\d\b", s)) and (
            "http" in s or "“" in s or '"' in s or "Proceedings" in s or "Conference" in s)
        if entry or (bullet and cited and len(s) < 300 and s.count(".") <= 4):
            out.add(i)
    return out
