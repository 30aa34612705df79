"""Structural numbers: the numbers of a handout that are not quantities, each with the reason it is not.

Section and table numbers, week and handout numbers, years, citation
numbers, list markers, page numbers, software versions, seeds, indices in
subscripts and exponents (and script labels the prose names: "the superscript
(0) denotes …"), row labels and column labels of tables, numbers in code and
in reference entries: none of these is a value a derivation could
check, and none counts as uncovered. Each carries its reason, so the report
shows what was set aside and why.

Two tiers: a *hard* structural number is never a claim's (a heading's "1",
"Table 13", "PyTorch 2.8"); a *soft* one is structural only when no claim
prints it ("ID 6", "position 1", numbers in code), because a derivation may
well state it.
"""

from __future__ import annotations

import bisect
import re

from ..read.document import Document
from ..read import Token

HARD, SOFT = "hard", "soft"

_NUM = r"\d+(?:\.\d+)*[a-z]?"
_LABELS = (r"Tables?|Figures?|Figs?\.|Eqs?\.|Equations?|§§?|Chapters?|Sections?|Weeks?|Units?|Laborator(?:y|ies)|"
           r"Labs?|Lectures?|Handouts?|Exercises?|Checkpoints?|Appendix|Appendices|Parts?|Pages?|pp?\.|Slides?|"
           r"Homeworks?|Problems?|Questions?|Theorems?|Lemmas?|Definitions?|Propositions?|Corollar(?:y|ies)|"
           r"Algorithms?|Listings?|Lines?")
_LABEL = re.compile(rf"(?<![\w])(?:{_LABELS})\s*#?\s*(?:{_NUM})(?:\s*(?:–|—|-|,|and|&|/|or|to)\s*(?:{_NUM}))*",
                    re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w])(?:PyTorch|Python|torch|TensorFlow|CUDA|NumPy|SymPy|SciPy|JAX|pandas|MATLAB|"
                      r"version|release)\s*(?:==?\s*)?v?\d+(?:\.\d+)*", re.IGNORECASE)
_SEED = re.compile(r"\bseeds?\b[^.;:\n]{0,12}?\d+(?:\s*(?:/|,|and)\s*\d+)*|manual_seed\(\s*\d+\s*\)", re.IGNORECASE)
_INDEX_ASSIGN = re.compile(r"(?<![\w\\])(?:[tijsqrckl]|\\ell|ℓ|pos)\s*=\s*(?:-?\d+(?!\.?\d)|[A-Z]\s*-\s*1)"
                           r"(?:\s*,\s*(?:\\,|\\;|\s)*(?:-?\d+(?!\.?\d)|\\ldots|\\dots|…|\.\.\.))*")
_INDEX_ARITH = re.compile(r"(?<![\w\\])(?:[tTsqijkKnNLDCrℓ]|\\ell)\s*[-+]\s*\d+(?!\.?\d)")
_TOKEN_ID = re.compile(r"\b(?:IDs?|id)\s+\d+(?:\s*(?:–|-|,|and|\.\.)\s*\d+)*")
_POSITION = re.compile(r"\b(?:positions?|rows?|columns?|sources?|coordinates?|features?|heads?|entry|entries|"
                       r"index|indices|layers?|blocks?|time steps?|steps?)\s+(?:\\\(|\$)?\s*\d+(?!\.?\d)"
                       r"(?:\s*(?:,|and|–)\s*\d+(?!\.?\d))*", re.IGNORECASE)
_CITATION = re.compile(r"\[\d+(?:\s*[,–-]\s*\d+)*\]")
# "the superscript (0) denotes …": a script label quoted in prose is the label, not a quantity
_NAMED_SCRIPT = re.compile(r"\b(?:superscripts?|subscripts?)\s+(?:\\\(|\$)?\s*(?:\^|_)?\{?\s*[(\[]?\s*\d+\s*[)\]]?",
                           re.IGNORECASE)
# a format specification of printed output: the .4 of {ft:.4f} or "%.3f"
_FORMAT_SPEC = re.compile(r"[:%][<>^=+\- ]?\d*\.\d+[fFeEgG%]")
# a notebook's execution counter: "In [36]:", "Out[36]:"
_PROMPT = re.compile(r"(?<!\w)(?:In|Out)\s?\[\s*\d+\s*\]:")
# an ordinal: the 2nd input, the 3rd row
_ORDINAL = re.compile(r"(?<![\w.])\d+(?:st|nd|rd|th)\b")
# a link to a place in the same page (a table of contents): [Why Mean=0 and Std=1?](#why-mean0-and-std1)
_ANCHOR_LINK = re.compile(r"\[[^\]\n]*\]\(#[^)\s]*\)")
# the arguments of a positional encoding, PE(pos) or PE(pos, i): a position and a dimension index
_PE_ARGUMENTS = re.compile(r"(?<![\w\\])PE\s*\(\s*\d+(?:\s*,\s*\d+)?\s*\)")
_HASH_NUMBER = re.compile(r"(?<![\w&\\])\\?#\d+(?![\d.])")
# the label that opens an item of a list of cases: "Case 1: …", "**Word 2 ("cat"):**", "### Example 3 — …" (one
# of these nouns and a whole number at the start of a line, then a colon, a parenthesis, a dash or the bold's end;
# named, not any capitalised word, so that a quantity such as "Total 12: …" is still checked)
_ITEMS = (r"Cases?|Words?|Tokens?|Examples?|Steps?|Tests?|Samples?|Sentences?|Sequences?|Inputs?|Queries|Query|"
          r"Epochs?|Iterations?|Rounds?|Scenarios?|Stages?|Phases?|Items?|Trials?|Batch(?:es)?|Documents?|Passes|Pass")
_ITEM_LABEL = re.compile(rf"^\s*(?:[-*•]\s+)?(?:#+\s*)?(?:\*\*|__)?\s*(?:{_ITEMS})\s+\d+(?![\d.,])"
                         r"(?=\s*(?::|\(|\*\*|__|—|–|-\s))")


def line_spans(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, tier, reason) of the structural spans of one line, by its words alone.

    These rules also apply to a claim's printed string, so that a claim and
    the text it is found in agree about which of their numbers are quantities.
    """
    spans = []
    for rx, tier, reason in ((_LABEL, HARD, "label (table, figure, section, week, handout …)"),
                             (_HASH_NUMBER, HARD, "numbered reference (#12)"),
                             (_ANCHOR_LINK, HARD, "link within the page (table of contents)"),
                             (_PE_ARGUMENTS, HARD, "position and dimension of PE(pos, i)"),
                             (_ITEM_LABEL, HARD, "label of an item (Case 1:, Word 2 (…))"),
                             (_PROMPT, HARD, "notebook prompt (In [1]:)"),
                             (_ORDINAL, HARD, "ordinal (2nd)"),
                             (_FORMAT_SPEC, HARD, "format specification (.4f)"),
                             (_VERSION, HARD, "software version"),
                             (_SEED, HARD, "random seed"),
                             (_INDEX_ASSIGN, HARD, "index value"),
                             (_INDEX_ARITH, HARD, "index arithmetic"),
                             (_TOKEN_ID, SOFT, "token ID"),
                             (_POSITION, SOFT, "position, row or feature number"),
                             (_NAMED_SCRIPT, SOFT, "superscript or subscript label named in the text")):
        for m in rx.finditer(text):
            spans.append((m.start(), m.end(), tier, reason))
    return spans


def _in(spans, tok: Token):
    """The (tier, reason) of the first span (in the rules' order) that holds ``tok``, or None; ``spans`` is a list
    from :func:`line_spans` or its :class:`_SpanIndex`."""
    if isinstance(spans, _SpanIndex):
        return spans.find(tok)
    for a, b, tier, reason in spans:
        if a <= tok.start and tok.end <= b:
            return tier, reason
    return None


class _SpanIndex:
    """The spans of :func:`line_spans` by rule, for :func:`_in` in logarithmic time: one rule's matches do not
    overlap, so a binary search finds the one that may hold a token (a long line holds many spans and tokens)."""

    def __init__(self, spans):
        self.rules: list[tuple[list[int], list]] = []
        for span in spans:  # the spans of one rule are consecutive, in the order of the text
            if not self.rules or self.rules[-1][1][-1][3] != span[3] or self.rules[-1][1][-1][0] > span[0]:
                self.rules.append(([], []))
            self.rules[-1][0].append(span[0])
            self.rules[-1][1].append(span)

    def find(self, tok: Token):
        for starts, spans in self.rules:
            k = bisect.bisect_right(starts, tok.start) - 1
            if k >= 0 and tok.end <= spans[k][1]:
                return spans[k][2], spans[k][3]
        return None


def script_reason(tok: Token) -> str | None:
    return {"sub": "subscript index", "sup": "superscript (exponent or depth/head label)",
            "ident": "part of a name", "url": "URL"}.get(tok.script)


def classify(doc: Document) -> None:
    """Set ``tier`` and ``rule`` of every structural token of ``doc`` (quantities keep tier "")."""
    by_line: dict[int, list[Token]] = {}
    for t in doc.tokens:
        by_line.setdefault(t.line, []).append(t)
    heading_lines = {h.line for h in doc.headings}
    citations = any(re.match(r"^\s*\[\d+\]\s", ln) for ln in doc.lines)
    for line, toks in by_line.items():
        text = doc.line(line)
        spans = _SpanIndex(line_spans(text))
        cited = _SpanIndex([(m.start(), m.end(), HARD, "citation") for m in _CITATION.finditer(text)]) \
            if citations else None
        table = doc.table_at(line)
        for i, t in enumerate(toks):
            verdict = _classify(doc, t, i, text, spans, table, line in heading_lines, cited)
            if verdict:
                t.tier, t.rule = verdict


def _classify(doc, t: Token, i: int, text: str, spans, table, heading: bool, cited):
    why = script_reason(t)
    if why:
        return HARD, why
    if t.line in doc.references:
        return HARD, "reference entry"
    hit = _in(spans, t)
    if hit and hit[0] == HARD:
        return hit
    if heading:
        return HARD, "heading"
    if table is not None and t.line == table.header:
        return HARD, "table column label"
    if table is not None and t.line in table.row_lines and re.fullmatch(r"\d+", t.text) and doc.cell_index(t) == 0:
        return HARD, "table row label"
    stripped = text.lstrip(" \t•*->")  # ">": a list inside a Markdown block quote
    marker = rf"\(?{re.escape(t.text)}(?:[.)]\s|\s*[·•]\s+[A-Z])"  # "1. ", "(2) ", "3) ", a step "4 · Add the"
    if i == 0 and re.fullmatch(r"\d+", t.text) and re.match(marker, stripped):
        return HARD, "list marker"
    if cited is not None and t.kind in ("number", "vector") and _in(cited, t):
        return HARD, "citation"
    if re.fullmatch(r"(19|20)\d\d", t.text) and table is None:
        return HARD, "year"
    if t.line in doc.code:
        return SOFT, "code"
    if hit:
        return hit
    return None


def claim_tokens(printed: str) -> list[Token]:
    """The quantity tokens of a claim's printed string (structural ones left out by the same rules as the text)."""
    from ..read import scan

    text = printed.strip().strip("$")
    toks = scan(text)
    spans = line_spans(text)
    out = []
    for t in toks:
        if script_reason(t):
            continue
        if _in(spans, t):  # "row 0", "ID 6" in a statement are not its numbers either
            continue
        out.append(t)
    return out
