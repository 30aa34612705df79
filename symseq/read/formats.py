"""Notebooks and saved web pages as the audit reads them: lines of text, which of them are code, printed output or
Markdown, and where each line is in the file.

The audit reads every format as numbered lines (:mod:`symseq.read.document`). Plain text, Markdown and LaTeX
are lines already; a notebook (``.ipynb``, read with nbformat) and an HTML page (read with the standard
library's :class:`html.parser.HTMLParser`) are *rendered* into lines here, each line with its :class:`Place`
in the file, so that a report can say "cell 7, line 3" or "HTML line 212" where the audit counts line 85.

**A notebook** is read cell by cell, in the notebook's order:

* a markdown cell: its source, read as Markdown (``#`` headings, pipe tables, ``$…$`` math, fences);
* a code cell: its source, all code (its numbers are soft structural: a derivation may still declare one as
  an input with ``section.given``, as ``Wf, Whf, bf = 0.5, 0.1, 0``), then its outputs as printed results:
  stream text (``print``), and the ``text/plain`` of ``execute_result`` and ``display_data`` (not the
  ``<Figure size 640x480 with 1 Axes>`` that stands for a figure or object shown otherwise); error
  tracebacks are not read, and terminal colour codes are dropped. Execution counts (``In [36]:``,
  ``Out[36]:``) are metadata, not text: they never become tokens;
* a raw cell: its source as plain text.

A blank line separates each cell from the next and a code cell's source from its output, so that a cell is a
paragraph of its own. Cells are numbered from 1 in the notebook's order, counting every cell (markdown, code
and raw), as ``nbformat``'s ``cells[k - 1]``; lines from 1 within the cell's source, and separately within
its printed output. A code cell that was run also names its execution count, which Jupyter shows beside it:
``cell 8 (In [36]), output line 2`` (:class:`Place`).

**An HTML page** keeps its block structure: ``h1``–``h6`` are marked headings, ``p``, ``li``, ``div`` and other
blocks start lines (paragraphs are separated by a blank line), a ``pre`` block is code (or printed output when
none of its lines reads as code: the rule of an unlabelled Markdown fence), a table is one line per row with
its cells separated by tabs (so that the audit's table rules read it) and its ``caption`` as the line before
it. ``script``, ``style``, ``nav``, ``noscript``, ``template``, ``svg`` and ``title`` are dropped. Mathematics
is kept as its TeX source: MathJax's ``<script type="math/tex">`` (``; mode=display`` as a display),
KaTeX's and MathML's ``<annotation encoding="application/x-tex">``, a ``<math alttext="…">``, and ``\\(…\\)``
written in the text; the rendered copies (MathJax 2's ``MathJax``, ``MathJax_Preview`` and assistive MathML spans,
KaTeX's ``katex-html``; MathJax 3's glyphs hold no text) are dropped, so that each number is read once. A line's
place is the line of the HTML source where its text starts.

Sources: the notebook format as nbformat documents it (https://nbformat.readthedocs.io/en/latest/
format_description.html: cells, their ``source`` as a string or a list of strings, outputs of type
``stream``, ``execute_result``, ``display_data`` and ``error``, ``execution_count``); the HTML elements as the
WHATWG HTML standard defines them (https://html.spec.whatwg.org/); MathJax 2's ``math/tex`` scripts
(https://docs.mathjax.org/en/v2.7-latest/advanced/model.html) and KaTeX's MathML annotation
(https://katex.org/docs/options: ``output: "htmlAndMathml"``).
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from html.parser import HTMLParser

from ..errors import AuditError, BackendUnavailable

FORMATS = ("text", "markdown", "latex", "notebook", "html")
"""The formats the audit reads (``--format``)."""

RENDERED = ("notebook", "html")
"""The formats rendered into lines here before the audit reads them."""

SUFFIXES = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
            ".ltx": "latex", ".ipynb": "notebook", ".html": "html", ".htm": "html", ".xhtml": "html"}
"""The format of each suffix; a file with another suffix is read as plain text."""


def format_of(path) -> str:
    """The format of a file by its suffix (:data:`SUFFIXES`, case aside), ``"text"`` for any other."""
    from pathlib import Path

    return SUFFIXES.get(Path(path).suffix.lower(), "text")


@dataclass(frozen=True)
class Place:
    """Where a line of a rendered notebook or HTML page is in its file, as its author finds it.

    Attributes:
        cell: the notebook cell, from 1 in the notebook's order (every cell counts), or None for an HTML page.
        line: the line within the cell's source or within its printed output (from 1), or the line of the
            HTML source where the text of the line starts.
        part: ``"source"`` or ``"output"`` for a notebook cell, ``"html"`` for a page.
        prompt: the code cell's execution count (``In [36]:``), or None.

    ``str(place)`` is what reports print: ``cell 7, line 3`` (a markdown cell), ``cell 8 (In [36]), line 3``
    and ``cell 8 (In [36]), output line 2`` (a code cell run as the 36th, as Jupyter shows it beside the cell), or
    ``HTML line 212``.
    """

    cell: int | None
    line: int
    part: str = "source"
    prompt: int | None = None

    def __str__(self) -> str:
        if self.cell is None:
            return f"HTML line {self.line}"
        prompt = f" (In [{self.prompt}])" if self.prompt is not None else ""
        return f"cell {self.cell}{prompt}, {'output line' if self.part == 'output' else 'line'} {self.line}"


@dataclass
class Rendering:
    """A notebook or page as lines. Line sets are 1-based, as :class:`~symseq.read.document.Document` counts.

    Attributes:
        lines: the text, one string per line.
        places: the :class:`Place` of each line (None for the blank lines put between cells or blocks).
        code: lines that are code (a code cell's source, a ``pre`` block of code).
        output: lines that are printed results (a code cell's outputs, a ``pre`` block of output).
        markdown: runs (first, last) of lines whose Markdown markup is read (markdown cells, HTML headings).
        pre: runs (first, last) of ``pre`` blocks without a language: code or printed output as the rule of an
            unlabelled Markdown fence decides (:mod:`symseq.read.document`).
    """

    lines: list = field(default_factory=list)
    places: list = field(default_factory=list)
    code: set = field(default_factory=set)
    output: set = field(default_factory=set)
    markdown: list = field(default_factory=list)
    pre: list = field(default_factory=list)

    def add(self, lines, place, *, kind: str = "text") -> None:
        """Append ``lines``; ``place(k)`` is the :class:`Place` of the k-th of them (from 1); ``kind`` is text,
        markdown, code, output or pre. A blank line is put first when the text so far does not end in one."""
        if not lines:
            return
        self.blank()
        first = len(self.lines) + 1
        for k, ln in enumerate(lines, start=1):
            self.lines.append(ln)
            self.places.append(place(k))
        last = len(self.lines)
        if kind == "code":
            self.code.update(range(first, last + 1))
        elif kind == "output":
            self.output.update(range(first, last + 1))
        elif kind == "markdown":
            self.markdown.append((first, last))
        elif kind == "pre":
            self.pre.append((first, last))

    def blank(self) -> None:
        if self.lines and self.lines[-1].strip():
            self.lines.append("")
            self.places.append(None)


# ---------------------------------------------------------------------------
# notebooks
# ---------------------------------------------------------------------------

_OBJECT_REPR = re.compile(r"<[^<>\n]*>")  # the text/plain of a figure or object: <Figure size 640x480 with 1 Axes>
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colours of a terminal in a stream output


def notebook(text: str, path) -> Rendering:
    """Render the notebook ``text`` (the file's JSON) into lines (see the module docstring).

    Raises:
        AuditError: when the text is not JSON, not a notebook, of an nbformat version nbformat does not read,
            or holds a cell without a type or with a source that is not text (names the cell).
        BackendUnavailable: when nbformat is not installed.
    """
    nb = _load(text, path)
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise AuditError(f"{path} is not a notebook: it has no list of cells; save it from Jupyter as .ipynb "
                         f"(nbformat 4) or give --format for another format")
    out = Rendering()
    for n, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("markdown", "code", "raw"):
            kind = cell.get("cell_type") if isinstance(cell, dict) else type(cell).__name__
            raise AuditError(f"{path}: cell {n} is not a markdown, code or raw cell (it is {kind!r}); "
                             f"repair the notebook in Jupyter (or with nbformat.validate) and save it again")
        source = _text(cell.get("source", ""), path, f"cell {n}'s source")
        kind = cell["cell_type"]
        prompt = cell.get("execution_count") if kind == "code" else None
        prompt = prompt if isinstance(prompt, int) else None
        out.add(source.splitlines(), lambda k, n=n, p=prompt: Place(n, k, "source", p),
                kind={"markdown": "markdown", "code": "code", "raw": "text"}[kind])
        if kind == "code":
            printed = []
            for o in cell.get("outputs") or ():
                printed.extend(_output_lines(o, path, n))
            out.add(printed, lambda k, n=n, p=prompt: Place(n, k, "output", p), kind="output")
    return out


def _load(text: str, path):
    try:
        import nbformat
    except ImportError:  # pragma: no cover - a dependency of symseq
        raise BackendUnavailable("reading a notebook needs nbformat: pip install nbformat") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing cell ids and the like: the audit reads what is there
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises NotJSONError, NBFormatError, jsonschema errors, KeyError …
        raise AuditError(f"{path} is not a notebook nbformat can read ({_why(exc)}); save it from Jupyter as "
                         f".ipynb (nbformat 4), or give --format markdown|text|html if it is another "
                         f"format") from None
    if not isinstance(nb, dict):
        raise AuditError(f"{path} is not a notebook (its JSON is a {type(nb).__name__}, not an object); save it "
                         f"from Jupyter as .ipynb")
    return nb


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError) or type(exc).__name__ == "NotJSONError":
        return "not JSON"
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg[:200]


def _text(value, path, what: str) -> str:
    """A notebook string field: a string, or a list of strings joined (nbformat's multiline strings)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "".join(value)
    raise AuditError(f"{path}: {what} is a {type(value).__name__}, not text; repair the notebook in Jupyter "
                     f"(or with nbformat.validate) and save it again")


def _output_lines(o, path, n: int) -> list[str]:
    """The printed lines of one output of cell ``n``: stream text, or the ``text/plain`` of a result."""
    if not isinstance(o, dict):
        return []
    kind = o.get("output_type")
    if kind == "stream":
        text = _text(o.get("text", ""), path, f"cell {n}'s output")
    elif kind in ("execute_result", "display_data"):
        data = o.get("data") or {}
        text = _text(data.get("text/plain", ""), path, f"cell {n}'s output") if isinstance(data, dict) else ""
        if _OBJECT_REPR.fullmatch(text.strip()):
            return []  # <Figure size 640x480 with 1 Axes>: the name of an object shown otherwise, no result
    else:  # an error's traceback is not a printed result
        return []
    return _ANSI.sub("", text).splitlines()


# ---------------------------------------------------------------------------
# HTML pages
# ---------------------------------------------------------------------------

_DROP = {"script", "style", "nav", "noscript", "template", "svg", "title", "iframe", "object", "canvas",
         "button", "select", "textarea"}
_DROP_CLASSES = {"MathJax", "MathJax_Preview", "MathJax_SVG", "MathJax_CHTML", "MJX_Assistive_MathML",
                 "katex-html", "MathJax_SVG_Display"}
_PARAGRAPH = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "ul", "ol",
              "dl", "figure", "table", "pre", "hr", "form", "fieldset", "details", "body", "address", "center"}
_LINE = {"li", "br", "dt", "dd", "figcaption", "caption", "summary", "tr", "thead", "tbody", "tfoot"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "param", "source", "track",
         "wbr"}
_CODE_CLASS = re.compile(r"(?:language|lang|highlight|sourceCode)-?(\w+)", re.IGNORECASE)
_OUTPUT_LANGS = {"text", "txt", "output", "plaintext", "console", "none", "nohighlight"}


class _Page(HTMLParser):
    """The text of a page with its block structure (see the module docstring)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = Rendering()
        self.line: list[str] = []  # the pieces of the line being built
        self.line_place: int | None = None  # its HTML source line
        self.drop: list = []  # [tag, depth] of the element being dropped (nested ones of the same tag counted)
        self.pre = 0  # depth of pre elements
        self.pre_lines: list = []  # (text, source line) of the pre block being read
        self.pre_kind = ""  # code, output or "" (decided from its lines)
        self.heading = 0  # level of the heading being read
        self.cell = 0  # depth of table cells: their blocks join the row's line
        self.row: list | None = None  # the cells of the table row being read
        self.math: dict | None = None  # the <math> element being read: tex, alttext, text, display
        self.script_math: str | None = None  # "inline" or "display" inside <script type="math/tex">

    # -- lines
    def flush(self, *, blank: bool = False) -> None:
        text = re.sub(r"[ \t\r\n\f\u00a0]+", " ", "".join(self.line)).strip()
        if text:
            place = self.line_place or self.getpos()[0]
            if self.heading:
                self.out.add(["#" * self.heading + " " + text], lambda k: Place(None, place, "html"),
                             kind="markdown")
                self.out.blank()
            else:
                self.out.lines.append(text)
                self.out.places.append(Place(None, place, "html"))
        self.line, self.line_place = [], None
        if blank:
            self.out.blank()

    def put(self, text: str) -> None:
        if self.row and self.cell:
            self.row[-1][0].append(text)
            return
        if not self.line and text.strip():
            self.line_place = self.getpos()[0] + text[:len(text) - len(text.lstrip())].count("\n")
        self.line.append(text)

    # -- parser events
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.drop:
            if tag == self.drop[-1][0] and tag not in _VOID:
                self.drop[-1][1] += 1
            return
        if self.math is not None:
            if tag == "annotation" and "tex" in (a.get("encoding") or "").lower():
                self.math["in_tex"] = True
            return
        classes = set((a.get("class") or "").split())
        if tag == "script":
            kind = (a.get("type") or "").lower()
            if kind.startswith("math/tex"):
                self.script_math = "display" if "mode=display" in kind else "inline"
                return
        if tag in _DROP or classes & _DROP_CLASSES:
            self.drop.append([tag, 1])
            return
        if tag == "math":
            self.math = {"tex": [], "alt": a.get("alttext") or "", "text": [], "in_tex": False,
                         "display": a.get("display") == "block"}
            return
        if self.pre:
            return
        if tag in ("td", "th") and self.row is not None:
            self.cell += 1
            self.row.append(([], self.getpos()[0]))
            return
        if self.row and self.cell and tag not in ("tr", "table"):
            if tag in _PARAGRAPH or tag in _LINE or tag in _HEADINGS:
                self.put(" ")  # a block inside a cell stays in its row's line
            return
        if tag == "tr":
            if self.row:  # a row left open: it ends where the next begins
                self._end_row()
            self.flush()
            self.row, self.cell = [], 0
            return
        if tag == "pre":
            self.flush(blank=True)
            self.pre += 1
            self.pre_lines, self.pre_kind = [], ""
            self._code_class(classes)
            return
        if tag == "code" and self.pre:
            self._code_class(classes)
            return
        if tag in _HEADINGS:
            self.flush(blank=True)
            self.heading = int(tag[1])
            return
        if tag in _PARAGRAPH:
            self.flush(blank=True)
        elif tag in _LINE:
            self.flush()
            if tag == "li":
                self.put("- ")

    def handle_startendtag(self, tag, attrs):
        if tag == "br" and not self.drop and self.math is None:
            if self.pre:
                self.pre_lines.append(("\n", self.getpos()[0]))
            elif not self.cell:
                self.flush()
            return
        if tag not in _VOID:  # <span/>: an element with nothing in it
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if self.drop:
            if tag == self.drop[-1][0]:
                self.drop[-1][1] -= 1
                if self.drop[-1][1] == 0:
                    self.drop.pop()
            return
        if tag == "script" and self.script_math:
            self.script_math = None
            return
        if self.math is not None:
            if tag == "annotation":
                self.math["in_tex"] = False
            if tag == "math":
                m, self.math = self.math, None
                tex = "".join(m["tex"]).strip() or m["alt"].strip()
                self._emit_math(tex or " ".join(x.strip() for x in m["text"] if x.strip()),
                                display=m["display"])
            return
        if tag == "pre" and self.pre:
            self.pre -= 1
            if not self.pre:
                self._end_pre()
            return
        if self.pre:
            return
        if tag in ("td", "th") and self.cell:
            self.cell -= 1
            return
        if self.row and self.cell and tag not in ("tr", "table"):
            return
        if tag == "tr" and self.row is not None:
            self._end_row()
            return
        if tag == "table":
            if self.row:
                self._end_row()
            self.row = None
            self.flush(blank=True)
            return
        if tag in _HEADINGS and self.heading:
            self.flush(blank=True)
            self.heading = 0
            return
        if tag in _PARAGRAPH:
            self.flush(blank=True)
        elif tag in _LINE:
            self.flush()

    def handle_data(self, data):
        if self.script_math:
            self._emit_math(data.strip(), display=self.script_math == "display")
            return
        if self.drop:
            return
        if self.math is not None:
            (self.math["tex"] if self.math["in_tex"] else self.math["text"]).append(data)
            return
        if self.pre:
            self.pre_lines.append((data, self.getpos()[0]))
            return
        self.put(data)

    # -- pieces
    def _emit_math(self, tex: str, *, display: bool) -> None:
        if not tex:
            return
        if display and not (self.row is not None and self.cell):
            self.flush()
            self.put("\\[" + tex + "\\]")
            self.flush()
        else:
            self.put("\\(" + tex + "\\)")

    def _code_class(self, classes) -> None:
        for c in classes:
            m = _CODE_CLASS.fullmatch(c)
            if m:
                self.pre_kind = "output" if m.group(1).lower() in _OUTPUT_LANGS else "code"

    def _end_pre(self) -> None:
        lines, places, line, start = [], [], "", None
        for data, where in self.pre_lines:
            for k, piece in enumerate(data.split("\n")):
                if k:
                    lines.append(line)
                    places.append(start)
                    line, start = "", None
                if start is None:
                    start = where + (k if k else 0)
                line += piece
        if line or start is not None:
            lines.append(line)
            places.append(start)
        while lines and not lines[-1].strip():
            lines.pop(), places.pop()
        while lines and not lines[0].strip():
            lines.pop(0), places.pop(0)
        lines = [ln.replace("\r", "").replace("\u00a0", " ") for ln in lines]
        kind = self.pre_kind or "pre"
        self.out.add(lines, lambda k: Place(None, places[k - 1] or 0, "html"), kind=kind)
        self.out.blank()
        self.pre_lines, self.pre_kind = [], ""

    def _end_row(self) -> None:
        cells = [re.sub(r"[ \t\r\n\f\u00a0]+", " ", "".join(parts)).strip() for parts, _ in self.row or ()]
        where = self.row[0][1] if self.row else self.getpos()[0]
        self.row = []
        self.cell = 0
        if any(cells):
            self.out.lines.append("\t".join(cells))
            self.out.places.append(Place(None, where, "html"))


def html(text: str, path) -> Rendering:
    """Render the HTML page ``text`` into lines (see the module docstring). Never raises for malformed HTML:
    the parser reads what it can, as a browser does."""
    page = _Page()
    page.feed(text)
    page.close()
    if page.row:
        page._end_row()
    page.flush()
    while page.out.lines and not page.out.lines[-1].strip():
        page.out.lines.pop(), page.out.places.pop()
    return page.out
