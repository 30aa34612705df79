"""Where each section of a derivation sits in a handout: the heading its title names, and its line range.

A derivation's section titles follow the handout's headings, though not to the
letter: "§1 One head" is the heading "1. One head", "Match each forward
operation to its backward calculation (Table 3)" carries a table in
parentheses, and "Inside a complete Transformer encoder: read the block as two
updates" joins a chapter heading and the subheading "Read the block as two
updates to the representation". Titles and headings are compared after
normalising § signs, numbering, punctuation and case; a title's parts (split at
a colon, a dash or a parenthesis) may each name the heading.

A located section runs from its heading to the next located heading of any
section audited in the same file, or to the next heading of its own level or
above that no section names (a Markdown ``#`` heading or a LaTeX sectioning
command: ``## A`` ends at the next ``#`` or ``##``, not at ``###``), whichever
comes first (or to the end of the file). A heading whose numbers are all the
page's own arithmetic therefore needs no section of its own to end the one
before it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from .document import Document, Heading

_MD_LEVEL = re.compile(r"^\s{0,3}(#{1,6})\s")
_TEX_LEVEL = re.compile(r"\\(part|chapter|section|subsection|subsubsection|paragraph)\*?\{")
_TEX_RANK = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5}
_STOP = {"a", "an", "the", "of", "and", "to", "in", "for", "with", "by", "on", "at", "is", "its", "it"}


@dataclass
class Located:
    """A section of a derivation and its place in the handout (1-based lines, ``end`` inclusive)."""

    section: object
    heading: int | None
    start: int | None = None
    end: int | None = None
    score: float = 0.0

    def __contains__(self, line: int) -> bool:
        return self.start is not None and self.start <= line <= self.end


@functools.lru_cache(maxsize=65536)
def normalise(title: str) -> str:
    """Lower case, without § signs, leading numbering, punctuation and parenthesised remarks (kept: every section
    title is compared with every heading)."""
    t = unicodedata.normalize("NFKC", title)
    t = re.sub(r"\([^()]*\)", " ", t)
    t = t.replace("’", "'").replace("“", "").replace("”", "").lower()
    t = re.sub(r"^\s*(§+\s*)?\d+(\.\d+)*\.?\s*", "", t)
    t = re.sub(r"[^\w\s']", " ", t)
    return re.sub(r"\s+", " ", t).strip()


@functools.lru_cache(maxsize=4096)
def _parts(title: str) -> tuple[str, ...]:
    pieces = re.split(r":|—|–| - |\(", title)
    out = [normalise(title)] + [normalise(p) for p in pieces]
    return tuple(p for i, p in enumerate(out) if p and p not in out[:i])


@functools.lru_cache(maxsize=65536)
def score(title: str, heading: str) -> float:
    """How well a section title names a heading: 1 for equal, less for a part, a prefix or shared words."""
    h = normalise(heading)
    if not h:
        return 0.0
    best = 0.0
    for k, p in enumerate(_parts(title)):
        whole = k == 0
        if p == h:
            best = max(best, 1.0 if whole else 0.95)
            continue
        short, long_ = (p, h) if len(p) <= len(h) else (h, p)
        if long_.startswith(short + " ") and len(short.split()) >= 2:
            best = max(best, 0.9 if whole else 0.85)
            continue
        pw, hw = set(p.split()) - _STOP, set(h.split()) - _STOP
        if pw and hw:
            jac = len(pw & hw) / len(pw | hw)
            if jac >= 0.6:
                best = max(best, 0.8 * jac)
    return best


def locate(doc: Document, derivations: list, *, threshold: float = 0.5) -> dict:
    """Map each section (by ``id``) of ``derivations`` to a :class:`Located` in ``doc``.

    Sections are matched in their derivation's order; among headings of
    equal score, the first one after the previous section's heading wins,
    so repeated headings ("Reveal the explanation") fall where they belong.
    Marked headings (``#``, ``\\section``) are tried first; a plain heading
    line ("4. The forward pass by hand", which Markdown would read as a list
    item) places a section that no marked heading names, in any format.
    Two derivations of one handout may both place a section under one
    heading ("Optional exercises" holds exercises for each half of Week 06).
    A title that no heading names but that a line of the text holds verbatim,
    as the whole line, places its section there, with or without blank lines
    around it.
    """
    out: dict[int, Located] = {}
    lines_by_text = None  # stripped line -> its line numbers, built when a title is looked for verbatim
    for d in derivations:
        taken: set[int] = set()  # within one derivation a heading is one section's; two derivations may share one
        prev = 0
        for s in d.sections:
            best, best_key = None, None
            for tier in ([h for h in doc.headings if h.marked], [h for h in doc.headings if not h.marked]):
                for h in tier:
                    sc = score(s.title, h.text)
                    if sc < threshold or h.line in taken:
                        continue
                    key = (sc, h.line >= prev, -abs(h.line - prev))
                    if best_key is None or key > best_key:
                        best, best_key = h, key
                if best is not None:
                    break
            if best is None:  # the title as a whole line of its own, whether or not blank lines surround it
                if lines_by_text is None:
                    lines_by_text = {}
                    for i, ln in enumerate(doc.lines, start=1):
                        lines_by_text.setdefault(ln.strip(), []).append(i)
                best = next((Heading(i, s.title.strip()) for i in lines_by_text.get(s.title.strip(), ())
                             if i not in taken and i not in doc.code), None)
                best_key = (1.0,) if best is not None else None
            if best is None:
                out[id(s)] = Located(s, None)
                continue
            taken.add(best.line)
            out[id(s)] = Located(s, best.line, score=best_key[0])
            prev = best.line
    starts = sorted(loc.heading for loc in out.values() if loc.heading is not None)
    ranked = [(h.line, r) for h in doc.headings if h.marked and (r := level(doc, h.line)) is not None]
    for loc in out.values():
        if loc.heading is None:
            continue
        own = level(doc, loc.heading)
        later = [x for x in starts if x > loc.heading]
        later += [x for x, r in ranked if own is not None and x > loc.heading and r <= own]
        loc.start = loc.heading
        loc.end = (min(later) - 1) if later else doc.n
    return out


def level(doc: Document, line: int) -> int | None:
    """The rank of the heading on ``line`` (1-based): the number of ``#`` of a Markdown heading (1 to 6), or 0 to 5
    for LaTeX's ``\\part`` … ``\\paragraph``; None for any other line (a setext, bold or plain heading), whose
    section ends only at the next located heading. A notebook's markdown cells and a web page's headings are read
    as Markdown (:meth:`~symseq.read.document.Document.markup`). Ranks of the two kinds are compared only within one file, whose headings are of one kind.

    Source: CommonMark 0.31, §4.2 "ATX headings"; the LaTeX sectioning commands (Lamport, *LaTeX*, §C.4).
    """
    if not 1 <= line <= len(doc.lines):
        return None
    text = doc.lines[line - 1]
    markup = doc.markup(line)
    if markup == "markdown" and (m := _MD_LEVEL.match(text)):
        return len(m.group(1))
    if markup == "latex" and (m := _TEX_LEVEL.search(text)):
        return _TEX_RANK[m.group(1)]
    return None


def span(located: dict, derivation) -> list[tuple[int, int]] | None:
    """The line ranges of a derivation's located sections, merged where they touch (None when none is located).

    Two derivations of one handout (Week 06's recurrent half and its encoder
    half) interleave nothing, but a derivation's sections need not be
    contiguous: its part of the text is the union of their ranges.
    """
    lines = sorted((loc.start, loc.end) for loc in (located.get(id(s)) for s in derivation.sections)
                   if loc is not None and loc.start is not None)
    if not lines:
        return None
    merged = [list(lines[0])]
    for a, b in lines[1:]:
        if a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [tuple(r) for r in merged]
