"""What a derivation reads from its page: the inputs and printed values the page shows, found by its own names.

The page is the source of what it prints; the derivation is the source of what it computes. A section names a
quantity by the page's own symbol (``W_z``, ``h_t``) or place (``Table 16``, the words of a line) and reads what
the page prints there, instead of copying the digits::

    @derivation.section("Example")
    def worked(s):
        W_z = L.parameter("W_z", s.given("W_z"))       # the matrix printed after "W_z =", recorded as an input
        ...
        s.claim(h_t)                                    # the value printed for h_t, claimed against h_t
        s.table("Table 16", None, A, cols=[...])        # every cell of the page's Table 16, one claim each

A derivation's page is its ``source`` file, looked for (:func:`find_page`) in the folders of
``$SYMSEQ_PAGES`` (separated by ``os.pathsep``) and ``$SYMSEQ_SEEDS``, beside the derivation's module and in the
folder above it (the bundled derivations ship the seed handouts they read beside their modules), in the working
folder, and in ``shared/seeds`` beside the working folder or beside the folder above the module. It is read by :mod:`symseq.read.document`, as the audit reads it,
and each section reads the lines from its heading to the next (:func:`symseq.read.sections.locate`); a section
that no heading names reads the whole page.

What is read is bound when the section is built: ``symseq verify`` then decides the claims as if their digits
had been typed, and ``symseq audit`` compares them with the page it is given (an edited copy of the page is
checked against what the derivation read from the original).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path
from types import SimpleNamespace

from ..errors import ClaimError
from ..numbers import exact as exact_number

PAGES_ENV = "SYMSEQ_PAGES"
# what stands between a name and its printed value, and between the links of a printed chain
_RELATION = re.compile(r"\s*(?::=|\\coloneqq|=|≈|\\approx|\\simeq)\s*")
_OPEN = {"[": "]", "(": ")", "{": "}"}


def search_path(module_file: str | os.PathLike | None = None) -> list[Path]:
    """The folders a derivation's page is looked for in, in order (see the module docstring)."""
    out = [Path(p) for p in os.environ.get(PAGES_ENV, "").split(os.pathsep) if p]
    seeds = os.environ.get("SYMSEQ_SEEDS")
    if seeds:
        out.append(Path(seeds))
    projects = [Path.cwd()]
    if module_file:
        here = Path(module_file).resolve().parent
        out += [here, here.parent]
        projects.append(here.parent)
    out.append(Path.cwd())
    out += [p.parent / "shared" / "seeds" for p in projects]
    return list(dict.fromkeys(out))


def find_page(source: str, module_file: str | os.PathLike | None = None) -> Path:
    """The file of the page named ``source`` (a file name) on :func:`search_path`.

    Raises:
        ClaimError: when no folder of the search path holds it, naming each folder looked in and the fix.
    """
    folders = search_path(module_file)
    for folder in folders:
        path = folder / source
        if path.is_file():
            return path
    raise ClaimError(f"the page {source!r} that this derivation reads was not found; looked in "
                     + ", ".join(str(f) for f in dict.fromkeys(folders))
                     + f". Put the page beside the derivation, or name its folder in ${PAGES_ENV} (the seed "
                     f"handouts' folder in $SYMSEQ_SEEDS)")


def read_page(path: Path):
    """The :class:`~symseq.read.document.Document` of the page at ``path``, read once per content (the file is
    opened each time, so that symseq's cache of decided pages records it as a file the derivation read)."""
    data = Path(path).read_bytes()
    return _document(str(Path(path).resolve()), hashlib.sha256(data).hexdigest())


@functools.lru_cache(maxsize=16)
def _document(path: str, sha: str):
    from ..read.document import read

    return read(path)


def section_lines(doc, titles: list[str], title: str) -> tuple[int, int] | None:
    """(first, last) line of the section titled ``title`` of a derivation whose sections are ``titles``, or None
    when no heading of ``doc`` names it (:func:`symseq.read.sections.locate`)."""
    from ..read.sections import locate

    stand_in = SimpleNamespace(sections=[SimpleNamespace(title=t) for t in titles])
    located = locate(doc, [stand_in])
    for s in stand_in.sections:
        if s.title == title:
            loc = located.get(id(s))
            return (loc.start, loc.end) if loc is not None and loc.start is not None else None
    return None


class PageView:
    """The lines of a page one section reads: what the page prints for a name, on a line, or in a table.

    Args:
        doc: the page (:class:`~symseq.read.document.Document`).
        first, last: the section's lines (1-based, inclusive).
        where: how errors name the section ("Example of gru-cell-click4ai.md").
    """

    def __init__(self, doc, first: int, last: int, where: str):
        self.doc, self.first, self.last, self.where = doc, first, last, where

    def __repr__(self) -> str:
        return f"PageView({self.where}, lines {self.first}–{self.last})"

    @property
    def lines(self) -> range:
        return range(self.first, self.last + 1)

    # -- places
    def line(self, near: str, *, occurrence: int = 0) -> int:
        """The line (1-based) of the section that holds the text ``near``, its ``occurrence``-th (from 0).

        Raises:
            ClaimError: when fewer lines of the section hold it.
        """
        hits = [i for i in self.lines if near in self.doc.line(i)]
        if len(hits) <= occurrence:
            raise ClaimError(f"{self.where}: {len(hits)} line(s) of the page hold {near!r}; expected at least "
                             f"{occurrence + 1}. Quote words of the line as the page prints them")
        return hits[occurrence]

    def _statements(self, name: str, near: str = "") -> list[tuple[int, int, int]]:
        """(line, column just after ``name =``, column where the statement must end) of each statement for
        ``name`` in the section, in order, on lines holding ``near`` when given. A name stands alone: ``h_t`` is
        neither the start of ``h_tilde`` nor the end of ``\\mathbf h_t``; give the name as the page prints it. A
        statement written in a formula (``\\(\\mathbf z_0 = (0.5, 0.2)\\)``) ends where the formula ends."""
        from ..read.page import math_spans

        pattern = re.compile(r"(?<![\w\\])" + re.escape(name) + r"(?![\w'])" + _RELATION.pattern)
        out = []
        for i in self.lines:
            text = self.doc.line(i)
            if near and near not in text:
                continue
            spans = math_spans(text)
            for m in pattern.finditer(text):
                end = next((b for a, b in spans if a <= m.start() < b), len(text))
                out.append((i, m.end(), end))
        return out

    # -- printed values
    def printed(self, name: str = "", *, near: str = "", index: int = -1, occurrence: int = 0) -> str:
        """The text of a value the page prints.

        With ``name``: the statements ``name = a = b = … = v`` of the section that print a value (a formula
        alone, ``z_t = sigmoid(W_z @ combined)``, prints none), the ``occurrence``-th of them (from 0), and its
        ``index``-th printed value after the name (``-1``, the default, is its final result ``v``; ``0`` the
        first); with ``near`` too, only statements on lines holding those words. A value is a number, or a
        bracketed list (``[0.599, 0.587]``, ``[[1, 0], [0, 1]]``), or a LaTeX matrix, whole. Without ``name``:
        the ``index``-th number, list or matrix printed anywhere on the ``occurrence``-th line holding ``near``
        that prints enough (the arguments of a call count: in ``tanh(W @ [1.0, 0.5]) = [0.46, 0.76]`` the first
        is ``[1.0, 0.5]``).

        Raises:
            ClaimError: when the section prints no such value, saying what it holds there.
        """
        if not name and not near:
            raise ClaimError(f"{self.where}: say where the page prints the value: a name (printed('h_t')) or "
                             f"words of its line (printed(near='Step 5'))")
        if name:
            places = self._statements(name, near)
            read = _values
        else:
            places = [(i, 0, None) for i in self.lines if near in self.doc.line(i)]
            read = _printed_tokens
        found = [v for i, col, end in places if -len(v := read(self.doc.line(i)[:end], col)) <= index < len(v)]
        if len(found) <= occurrence:
            what = f"{name!r}" + (f" on a line holding {near!r}" if near and name else "") if name else \
                f"the lines holding {near!r}"
            seen = "; ".join(f"line {i}: {self.doc.line(i).strip()[:60]!r}" for i, _, _ in places[:3])
            raise ClaimError(f"{self.where}: the page prints {len(found)} value(s) for {what} (value {index} of "
                             f"a statement '… = value'); expected at least {occurrence + 1}"
                             + (f". It holds {seen}" if seen else ". No line of the section holds it"))
        return found[occurrence][index]

    def value(self, name: str = "", *, near: str = "", index: int = 0, occurrence: int = 0):
        """The exact value of what the page prints (as :meth:`printed`, the first value by default): a SymPy
        Rational for a number, an ImmutableMatrix for a list (a flat list is one row) or a LaTeX matrix.

        Raises:
            ClaimError: as :meth:`printed`, and when the printed text is not a number or a list of numbers.
        """
        return exact_value(self.printed(name, near=near, index=index, occurrence=occurrence), self.where)

    def numbers(self, after: str, count: int, *, occurrence: int = 0) -> list[str]:
        """The ``count`` numbers the page prints next after the text ``after`` (in the section, across lines), as
        printed: the bare cells of a matrix set over several lines, or of a list of numbers.

        Raises:
            ClaimError: when the section prints fewer.
        """
        from ..read import read_printed, scan

        line = self.line(after, occurrence=occurrence)
        col = self.doc.line(line).index(after) + len(after)
        out = []
        for i in range(line, self.last + 1):
            for t in scan(self.doc.line(i), i):
                if (i > line or t.start >= col) and not t.script and t.kind != "shape":
                    out += [t.text] if t.is_scalar else [e.text for e in read_printed(t.text).entries]
                    if len(out) >= count:
                        return out[:count]
        raise ClaimError(f"{self.where}: the page prints {len(out)} number(s) after {after!r} in this section; "
                         f"expected {count}")

    def table(self, label: str) -> list[list[str]]:
        """The data rows of the page's table ``label`` (``"Table 16"``), each a list of its cells as printed
        (stripped; the row label is the first cell).

        Raises:
            ClaimError: when the page has no table so labelled.
        """
        t = self.doc.table(label)
        if t is None:
            labels = [x.label for x in self.doc.tables if x.label]
            raise ClaimError(f"{self.where}: the page has no table {label!r}; its labelled tables are "
                             f"{', '.join(labels) or 'none'} (a table is labelled by a caption line at most three "
                             f"lines above it that starts 'Table N:' or 'Table N.')")
        return [_cells(self.doc.line(i), t.sep) for i in t.rows]


def _cells(text: str, sep: str) -> list[str]:
    if sep == "|":
        text = text.strip().strip("|")
    elif sep == "&":
        text = re.sub(r"\\\\\s*(\\hline)?\s*$", "", text)
        return [c.strip() for c in re.split(r"(?<!\\)&", text)]
    return [c.strip() for c in text.split(sep)]


def _values(text: str, col: int) -> list[str]:
    """The values printed in ``text`` from column ``col``: each link of a chain ``a = b = c`` that is a number, a
    bracketed list of numbers or a LaTeX matrix, whole, in order. Links that compute (``sigmoid([0.40, 0.35])``)
    are not values; a value followed by more words (``[1.0, 0.5], prev_hidden h = …``) ends the chain."""
    from ..read import scan

    out = []
    for link in _top_links(text[col:]):
        link = link.strip()
        whole = _leading_value(link)
        if whole is None:
            tokens = [t for t in scan(link) if not t.script]
            if not tokens or tokens[0].start != 0 or tokens[0].kind not in ("number", "fraction", "root"):
                continue
            whole = tokens[0].text
            if link[tokens[0].end:].startswith("(") or len(tokens) > 1 and not _ends_statement(link[tokens[0].end:]):
                continue  # \tfrac12(\hat y-y)^2, 0.2 + 0.3: a computation, not a value
        out.append(whole)
        if _ends_statement(link[len(whole):]) and link[len(whole):].strip():
            break
    return out


def _top_links(text: str) -> list[str]:
    """``text`` cut at each relation (``=``, ``≈``, ``\\approx`` …) that stands outside braces: the ``=`` of
    ``\\sum_{t=0}`` is no link of a chain."""
    out, start = [], 0
    for m in _RELATION.finditer(text):
        if text.count("{", 0, m.start()) == text.count("}", 0, m.start()):
            out.append(text[start:m.start()])
            start = m.end()
    return out + [text[start:]]


def _printed_tokens(text: str, col: int = 0) -> list[str]:
    """Every number, list or matrix printed in ``text`` (subscripts and superscripts are not values), in order."""
    from ..read import scan

    return [t.text for t in scan(text) if not t.script and t.start >= col and t.kind != "shape"]


def _ends_statement(tail: str) -> bool:
    """Whether what follows a value in its link ends its statement: punctuation, a bracketed remark or words."""
    tail = tail.strip()
    return not tail or tail[0] in ".,;:()" or tail[0].isalpha() and not re.match(r"[A-Za-z]\w*\s*[\[(]", tail)


def _leading_value(link: str) -> str | None:
    """The bracketed list or LaTeX matrix that ``link`` starts with, when it is one of numbers; else None."""
    from ..read import read_printed

    if not link:
        return None
    if link.startswith("\\begin{"):
        env = re.match(r"\\begin\{(\w+)\}", link)
        end = link.find(f"\\end{{{env.group(1)}}}")
        text = link[:end + len(env.group(1)) + 6] if end >= 0 else None
    elif link[0] in "[(":
        depth, text = 0, None
        for k, ch in enumerate(link):
            if ch in "[(":
                depth += 1
            elif ch in "])":
                depth -= 1
            if depth == 0:
                text = link[:k + 1]
                break
    else:
        return None
    if text is None:
        return None
    try:
        p = read_printed(text)
    except ClaimError:
        return None
    return text if p.kind in ("vector", "matrix") and all(hasattr(e, "value") for e in p.entries) else None


def printed_parts(text: str) -> list:
    """The exact values of the numbers, lists and matrices the page scanner finds in ``text``, one per token: a
    nested list ``[[0.3, 0.2], [0.1, 0.5]]`` is two rows, as the audit reads the page."""
    from ..read import scan

    return [exact_value(t.text) for t in scan(text) if not t.script]


def exact_value(text: str, where: str = "the page"):
    """The exact value of a printed number or list of numbers (``"0.2"`` → 1/5, ``"[[1, 0], [0, 1]]"`` → a 2×2
    ImmutableMatrix, a flat list → 1×n); an entry may be a printed fraction (``\\tfrac12``, ``1/4``).

    Raises:
        ClaimError: for text that is not a number or a list of numbers, quoting it.
    """
    import sympy as sp

    from ..read import read_printed

    p = read_printed(text)
    values = [e.value if hasattr(e, "value") else e for e in p.entries]
    if not all(isinstance(v, sp.Rational) for v in values):
        raise ClaimError(f"{where}: {text!r} is not a printed number or list of numbers")
    if not p.shape:  # one number, printed as a decimal or a fraction
        return exact_number(values[0])
    rows, cols = p.shape if len(p.shape) == 2 else (1, len(p.entries))
    return sp.ImmutableMatrix(rows, cols, values)
