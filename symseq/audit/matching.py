"""Matching a derivation's claims, inputs and reported numbers to the tokens of a handout.

The order of the work:

1. Each claim is scanned like the text (:func:`symseq.audit.structure.claim_tokens`)
   and grouped by where it is looked for: the table row its location names
   ("Table 4, tanh"), the table ("Table 13, row 0: a"), the lines a ``near=``
   anchor names, else its section. The declared inputs (``section.given``) of a
   located section join its group. Within each group one alignment
   (:meth:`Auditor._align`) attributes claims and inputs, in the order the
   derivation states them, to token occurrences in the order of the text: each
   takes at most one occurrence and each token serves at most one, so equal
   printed strings take different occurrences in order. A claim matches its
   tokens as it prints them, or entry by entry (a matrix printed row by row, a
   table row of cells). The alignment counts exact prints first, then *hints*:
   a claim left without one whose place in the order holds its number edited
   (a digit or two, the sign, two entries swapped, one number of several
   deleted).
2. Claims the alignment leaves out (stated in another order than the text) are
   searched again in their range and section; lone integers only between the
   numbers of their neighbours, and after the name their location gives them
   ("d_v = 2"); claims repeating a found one's place and string share its
   occurrence. Then the hints whose tokens are still free are checked: the claim
   restated with the text's number either holds (covered) or not (wrong, with
   the correct rounding and the digit at fault).
3. Claims of sections the text gives no heading are placed between the numbers
   found for the sections before and after them, then searched in the
   derivation's part of the text and (except lone integers) the whole file.
4. Numbers declared reported are marked; inputs not yet attributed take the
   tokens of their value (a table's rows in order; an edited entry is an erratum
   of the input); the rest are missing, with the lines where they were expected.
5. Every matched claim is checked; a claim that does not hold makes its tokens
   wrong; one not found is missing from the text (and, if it does not hold
   either, an erratum "not located in the text"). Claims whose number also
   stands, uncovered, where it could be are listed as open attributions.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

import sympy as sp

from ..errors import SymseqError
from ..verify.claims import Claim, entry_label, exact_value
from ..read import NUMBER, SIGNED_NUMBER, PrintedNumber, canonical, is_scientific, read_number
from .attribution import Attribution, Given, Reported, Rule, Unchecked, verdict_of
from ..read.document import Document
from .report import Ambiguous, AuditReport, Erratum, Missing
from ..read.sections import locate, span
from .structure import HARD, SOFT, claim_tokens, classify
from .words import synonym_quotes
from ..read import MINUS, Token, in_value_range, number_value, scan_words

_LABEL_REASONS = ("position, row or feature number", "superscript or subscript label named in the text")
_LABEL = re.compile(r"\b(Table|Figure)\s+\d+\b")


@dataclass(eq=False)  # one claim is one object: compared by identity, never by its values
class _Claim:
    claim: Claim
    refs: list  # the tokens of its printed string (claim_tokens), scanned once
    keys: list
    section: object
    rng: tuple | None  # primary range (lines), inclusive
    sect_rng: tuple | None
    group: tuple
    weak: bool
    raw: str
    order: int
    dspan: tuple | None = None  # the derivation's part of the text
    hits: list = field(default_factory=list)  # token positions
    words: list = field(default_factory=list)
    trial: Claim | None = None  # the claim restated with an edited token's text
    prop: bool = False  # a property whose statement repeats the handout's formula
    needs_raw: bool = False  # match only where the text reads as the printed string
    quoted: bool = False  # a property stated as a short formula of the handout ("T=1", "r<1"): it must be found
    restated: bool = False  # a property restating the handout's formula (of several numbers, or of one as the
    # handout writes it): found only where the text reads so, and required like a quoted one
    edit: tuple | None = None  # (token position, the claim's own token) of a number edited within several
    lead: str = ""  # a lone integer whose location reads "d_v = 2": the text before its token, "d_v=" (raw)
    row: bool = False  # its location names a table row ("Table 4, tanh"): it is looked for in that row only
    dropped: int | None = None  # the number of its printed string that the text leaves out, where it stands
    aligned: bool = False  # found by the alignment of its group (in the text's order), not by a later search
    hint: tuple | None = None  # (token positions, index of the edited one) where the alignment expects it edited

    @property
    def numeral(self) -> bool:
        """Whether the claim prints a bare integer ("3"), which a number written as a word ("three") may stand for."""
        return bool(re.fullmatch(r"-?\d+", self.raw))

    @property
    def in_table(self) -> bool:
        """Whether the claim is looked for in a table its location names ("Table 4")."""
        return isinstance(self.group[1], str) and self.group[1] not in ("near", "cell")

    @property
    def place(self) -> tuple:
        """Where and as what the claim is printed: claims of one place printing one string share its token. Only
        a place the derivation names (``at=``, ``near=``) is one place; claims of a section that name none each
        take their own occurrence (so a deleted one is missing, not shared)."""
        if not self.claim.location.at and not self.claim.near:
            return (id(self),)
        return self.claim.location, self.claim.printed, self.claim.near


def _raw(text: str) -> str:
    t = text.replace(MINUS, "-")
    for a, b in (("\\times", "×"), ("\\sqrt", "√"), ("\\left", ""), ("\\right", ""), ("\\mathrm", ""),
                 ("\\mathbf", ""), ("\\bigl", ""), ("\\bigr", ""), ("\\Bigl", ""), ("\\Bigr", ""), ("&", ""),
                 ("\\,", ""), ("\\;", ""), ("\\!", ""), ("\\ ", ""), ("\\cdot", "·")):
        t = t.replace(a, b)
    return re.sub(r"[\s${}]", "", t)


def _tuple_name(line: str, t: Token) -> str | None:
    """The name (raw, with ``=``) that a tuple assignment gives token ``t``: ``bf=`` for the 0 of
    ``Wf, Whf, bf = 0.5, 0.1, 0``; None when ``t`` is not one value of such a line."""
    m = re.match(r"\s*([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)+)\s*=(?!=)\s*", line)
    if not m or t.start < m.end():
        return None
    names = [x.strip() for x in m.group(1).split(",")]
    depth, k = 0, 0
    for ch in line[m.end():t.start]:
        depth += ch in "([{"
        depth -= ch in ")]}"
        k += ch == "," and depth == 0
    return _raw(names[k]) + "=" if depth == 0 and k < len(names) else None


def _anchored(near: str, value) -> str:
    """The text (raw) that ``near`` puts before ``value`` when it ends with that number: "ratherthan" for
    near="rather than 3" and the value 3, so an input so anchored is the number printed there, not another 3 of
    the line (a deleted one is missing); "" otherwise."""
    m = re.search(r"(?<![\w.])(-?(?:" + NUMBER + r"))\W*$", near)
    return _raw(near[:m.start(1)]) if m and number_value(m.group(1)) == value and _raw(near[:m.start(1)]) else ""


@functools.lru_cache(maxsize=4096)
def _quotations(near: str) -> tuple[str, ...]:
    """The raw texts (:func:`_raw`) a line may hold for ``near``: itself, then with a comparison word of it in other
    words of the same meaning (:func:`symseq.audit.words.synonym_quotes`)."""
    return tuple(_raw(x) for x in (near, *synonym_quotes(near)))


def _bare(raw: str) -> str:
    """A raw text without its digits, signs, decimal points, commas, brackets, roots and times signs: what an
    edited or deleted number (a tuple, √3, 7×5) leaves alike."""
    return re.sub(r"[-+\u2212\d.,()\[\]√×]", "", raw)


@functools.lru_cache(maxsize=65536)
def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def digit_fault(printed: str, correct: str) -> str:
    """Which digit of ``printed`` is at fault against ``correct``: "4th decimal: printed 5, correct 4"."""
    # one printed number each (12,832 → 12832, 35% → 35, 8 × 10^{k} → 8ek); other text: ASCII minus signs
    whole = read_number(printed) is not None and read_number(correct) is not None
    p, c = (canonical(t).removesuffix("%") if whole else t.replace(MINUS, "-") for t in (printed, correct))
    if whole and "e" in p.lower() and "e" in c.lower():
        (pm, _, pe), (cm, _, ce) = p.lower().partition("e"), c.lower().partition("e")
        if int(pe) != int(ce):
            return f"the exponent: printed {printed}, correct {correct}"
        p, c = pm, cm
    if p.startswith("-") != c.startswith("-"):
        return f"the sign: printed {printed}, correct {correct}"
    p, c = p.lstrip("-"), c.lstrip("-")
    pi, ci = (p + ".").index("."), (c + ".").index(".")
    if pi != ci:
        return f"the magnitude: printed {printed}, correct {correct}"
    for k in range(max(len(p), len(c))):
        a = p[k] if k < len(p) else ""
        b = c[k] if k < len(c) else ""
        if a == b:
            continue
        if not a or not b:
            return f"the number of digits: printed {printed}, correct {correct}"
        if k < pi:
            place = pi - k
            name = {1: "units", 2: "tens", 3: "hundreds", 4: "thousands"}.get(place, f"10^{place - 1}s")
            return f"the {name} digit: printed {a}, correct {b}"
        return f"{_ordinal(k - pi)} decimal: printed {a}, correct {b}"
    return "none"


@dataclass(eq=False)  # (as _Claim)
class _Input:
    """A declared input (``section.given``) of a located section, aligned with its section's claims."""

    given: object
    derivation: object
    section: object
    value: object
    entries: list
    shape: tuple
    source: Given  # the input, as attributions and errata name it
    rng: tuple
    group: tuple
    order: tuple
    hits: list = field(default_factory=list)
    hint: tuple | None = None
    aligned: bool = False
    keys: tuple = (None,)  # one token
    claim = None
    lead: str = ""  # a lone integer named d_k where its section prints "d_k=…": the text before its token, raw
    symbol: str = ""  # "d_k=" for an input whose what= begins with its symbol ("d_k of head 2", "D, the width")
    lead_in: tuple | None = None  # the lines that introduce its section (Auditor._lead_in)

    @property
    def sect_rng(self):
        return self.rng


class _Gap(tuple):
    """Lines (first, last) of a section without a heading, holding only the tokens strictly between the token
    positions ``after`` and ``before`` (see :meth:`Auditor._between`)."""

    def __new__(cls, lines: tuple, after: int, before: int):
        gap = super().__new__(cls, lines)
        gap.after, gap.before = after, before
        gap.expected = tuple(lines)  # where its numbers were expected (set wider by Auditor._between)
        return gap


class Auditor:
    """One audit of ``doc`` against ``derivations`` (use :func:`audit`)."""

    def __init__(self, doc: Document, derivations: list, *, dps: int = 50):
        self.doc = doc
        self.derivations = derivations
        self.dps = dps
        self.toks = doc.tokens
        self.owner: dict[int, list] = {}  # token position -> claims (or inputs) covering it
        self._released: list = []  # claims an edited run took their tokens from (_give_back), to place again
        self.report = AuditReport(doc.path, [d.name for d in derivations], doc.tokens,
                                  places=doc.where if doc.places is not None else None)
        self.words_used: set = set()
        self._unprinted: list[Claim] = []  # claims of values the handout leaves to the reader
        self._first_line = [t.line for t in self.toks]  # tokens come in text order
        self._input_values: list | None = None
        self._taken = 0  # claims found so far (the version of _between's answers)
        self._places: dict = {}  # section id -> _between's answer, "inputs" -> _input_places' (see _memo)
        self._places_at = 0
        self._inputs_by_size: dict | None = None  # number of entries -> indices in _input_values
        self._same_cache: dict = {}  # token position -> the indices (in _input_values) of the inputs it prints
        self._inputs_aligned: list = []
        self._inputs_done: set = set()  # id of each Given already attributed
        self._raw_lines = [""] + [_raw(doc.line(k)) for k in range(1, doc.n + 1)]  # 1-based, as _raw reads them
        self._key_index: dict | None = None  # token key -> positions (_by_key)
        self._streams: dict = {}  # (soft, range) -> _stream's token positions
        self._bare_lines: list | None = None  # _bare of each raw line, when a claim anchored with near= asks
        self._setters: dict[int, tuple] = {}  # token position -> (its tuple assignment's name, raw text before it)

    # -- ranges
    def _lines(self, rng) -> list[int]:
        """Token positions in a line range (a, b), or in a list of ranges, or strictly within a :class:`_Gap`."""
        if rng is None:
            return []
        if isinstance(rng, _Gap):
            return list(range(rng.after + 1, rng.before))
        ranges = rng if isinstance(rng, list) else [rng]
        if len(ranges) == 1:
            a, b = ranges[0]
            return list(range(bisect.bisect_left(self._first_line, a), bisect.bisect_right(self._first_line, b)))
        return [i for i, t in enumerate(self.toks) if any(a <= t.line <= b for a, b in ranges)]

    def _between(self, section) -> "_Gap | None":
        """Where a section the text gives no heading can be: after the last number found for the sections of
        its derivation before it (and their headings), before the first found for those after it. Sections
        follow the handout's order, so a lone integer or scalar input of the section is looked for there.
        None when the bounds cross."""
        return self._memo(id(section), lambda: self._between_now(section))

    def _memo(self, key, compute):
        """``compute()``, kept until the next claim is found (:meth:`_take`): the places of sections and inputs
        follow from the claims found so far, and are asked for once per token otherwise."""
        if self._places_at != self._taken:
            self._places.clear()
            self._places_at = self._taken
        if key not in self._places:
            self._places[key] = compute()
        return self._places[key]

    def _between_now(self, section) -> "_Gap | None":
        """:meth:`_between` computed from the claims found so far."""
        d = section.derivation
        index = {id(x): k for k, x in enumerate(d.sections)}
        k = index[id(section)]
        lo, hi = -1, len(self.toks)
        for c in self._all_claims:
            j = index.get(id(c.section))
            if j is not None and j != k and c.hits:
                lo, hi = (max(lo, max(c.hits)), hi) if j < k else (lo, min(hi, min(c.hits)))
        for j, x in enumerate(d.sections):
            loc = self.located.get(id(x))
            if loc is not None and loc.heading is not None:
                first = bisect.bisect_left(self._first_line, loc.heading)  # its first token
                lo, hi = (max(lo, first - 1), hi) if j < k else (lo, min(hi, first))
        if lo + 1 > hi - 1:
            return None
        gap = _Gap((self.toks[lo + 1].line, self.toks[hi - 1].line), lo, hi)
        # where a number of it was expected: from the number found before it to the one after (a number deleted
        # there leaves no token between them)
        gap.expected = (self.toks[lo].line if lo >= 0 else 1, self.toks[hi].line if hi < len(self.toks) else self.doc.n)
        return gap

    def _free(self, i: int, soft: bool) -> bool:
        t = self.toks[i]
        if i in self.owner or t.attribution is not None:
            return False
        return t.tier == "" or (soft and t.tier == SOFT)

    def _label(self, i: int) -> bool:
        """Whether token ``i`` is the number of a label the text names ("row 2", "position 1", "subscript 0")."""
        t = self.toks[i]
        return t.tier == SOFT and t.attribution is None and t.rule in _LABEL_REASONS

    # -- the passes
    def run(self) -> AuditReport:
        classify(self.doc)
        self.located = locate(self.doc, self.derivations)
        rep = self.report
        for d in self.derivations:
            sp_ = span(self.located, d)
            if sp_:
                rep.spans[d.name] = sp_
            for s in d.sections:
                if s.error:
                    rep.broken.append((d.name, s.title, s.error.splitlines()[0]))
                if s.skipped:
                    rep.skipped.append((d.name, s.title, s.skipped))
                loc = self.located.get(id(s))
                if loc is None or loc.start is None:
                    rep.unlocated.append((d.name, s.title))
                rep.sections.append((d.name, s.title, (loc.start, loc.end) if loc is not None and
                                     loc.start is not None else None))
        claims = self._claims()
        self._inputs_aligned = self._aligned_inputs()
        self._all_claims = claims
        self._group_claims = {}
        for c in claims + self._inputs_aligned:
            self._group_claims.setdefault(c.group, []).append(c)
        self._reported(pinned=True)
        self._align(claims)
        self._anywhere([c for c in claims if not c.hits and not c.words and not self._hinted(c)], wide=False)
        self._share(claims)
        self._reported(pinned=False)
        self._hints(claims)
        self._anywhere([c for c in claims if not c.hits and not c.words], wide=False)
        self._share(claims)
        self._edited([c for c in claims if not c.hits and not c.words])
        self._replace_released()
        self._anywhere([c for c in claims if not c.hits and not c.words], wide=True)
        self._share(claims)
        unlocated = [c for c in claims if not c.hits and not c.words and c.sect_rng is None]
        self._edited(unlocated, unlocated=True)
        self._replace_released()
        self._anywhere([c for c in unlocated if not c.hits], wide=True, last=True)
        self._share(claims)
        self._inputs()
        self._decide(claims)
        self._ambiguous(claims)
        self._finish()
        rep.absent = self._absent()
        return rep

    def _absent(self) -> list[str]:
        """The derivations of which nothing is in the text: no section located by a heading, and no token
        attributed to a claim or input of theirs (an empty file, or the handout of another derivation)."""
        given = {id(g): d for d in self.derivations for s in d.sections for g in getattr(s, "inputs", [])}
        found = set()
        for owners in self.owner.values():
            for o in owners:
                d = o.section.derivation if isinstance(o, _Claim) else o.derivation if isinstance(o, _Input) \
                    else given.get(id(o))
                if d is not None:
                    found.add(id(d))
        found |= {id(c.section.derivation) for c in self._all_claims if c.hits or c.words}
        located = {id(d) for d in self.derivations for s in d.sections
                   if (loc := self.located.get(id(s))) is not None and loc.start is not None}
        return [d.name for d in self.derivations if id(d) not in found | located]

    def _claims(self) -> list[_Claim]:
        out = []
        for di, d in enumerate(self.derivations):
            sp_ = span(self.located, d)
            for si, s in enumerate(d.sections):
                loc = self.located.get(id(s))
                sect = (loc.start, loc.end) if loc is not None and loc.start is not None else None
                for c in s.claims:
                    if not c.in_text:
                        self._unprinted.append(c)
                        continue
                    try:
                        refs = claim_tokens(c.printed)
                    except SymseqError:
                        refs = []
                    keys = [t.key for t in refs]
                    prop = c.kind == "property"
                    if prop and c.near and _sentence(c.printed):
                        keys = []  # a sentence quoting the page ("… at each of its two positions (0 and 3)"): its
                        # numbers describe, the quote is what the page prints
                    if not keys:  # a statement in words ("gives a different result"): its words must stay in the text
                        held = self._near(c.near, sect) if c.near else None
                        if c.near and held is None:
                            self.report.missing.append(Missing(c.id, c.printed, c.location, c.what, kind="claim",
                                                               lines=self._reworded(c.near, sect) or sect,
                                                               near=c.near))
                        elif held and not any(self._quotes(c.near, a) for a, _ in held):
                            # read only with its numbers aside: the page's formula now has another exponent,
                            # index or count (σ^5 for the σ^4 the derivation proved)
                            self.report.missing.append(Missing(c.id, c.printed, c.location, c.what, kind="claim",
                                                               lines=held[0] if len(held) == 1 else sect,
                                                               near=c.near))
                        elif held:
                            self.report.quotes.append((tuple(held), c.near, c.id))
                        continue
                    at = c.location.at
                    table = self.doc.table(c.location.table) if c.location.table else None
                    rng = (table.first, table.last) if table else sect
                    row = self._row(table, c.location.after_table) if table else None
                    if row is not None:  # "Table 4, tanh": the row that begins with tanh
                        rng = (row, row)
                    cell = self.doc.cell_range(at) if table is None and at else None
                    if cell is not None:  # "In [7]": the lines of the notebook cell run as the 7th
                        rng = cell
                    if c.near:
                        rng = self._near(c.near, cell or sect)
                        if rng is None:
                            self.report.missing.append(Missing(c.id, c.printed, c.location, c.what,
                                                               kind="claim", lines=sect, near=c.near))
                            continue
                        self.report.quotes.append((tuple(rng), c.near, c.id))
                    weak = len(keys) == 1 and bool(re.fullmatch(r"-?\d+", keys[0]))
                    group = (d.name, c.location.table, row) if table else (d.name, id(s))
                    own = sect
                    if cell is not None:
                        own, group = cell, (d.name, "cell", cell)
                    if c.near:
                        own, group = rng, (d.name, "near", c.near)
                    lead = re.fullmatch(rf"(?:.*,\s*)?([^,=]+?)\s*=\s*{re.escape(c.printed.strip())}", at)
                    if lead and any(h.text.strip() == at.strip() for h in self.doc.headings):
                        lead = None  # at= names a heading ("Step 1: Gradients at t = 2"): a place, not "t = 2"
                    lead = _raw(lead.group(1)) + "=" if lead and weak and not prop else ""
                    if not lead and weak and not prop and own and not c.near:
                        lead = self._named_in(c.what, own)  # what="d_k, the width" where the section sets d_k=
                    out.append(_Claim(c, refs, keys, s, rng, own, group, weak and not prop, _raw(c.printed),
                                      (di, si, c.seq), dspan=sp_, prop=prop, needs_raw=prop and weak,
                                      quoted=prop and weak and _formula(c.printed),
                                      restated=prop and _formula(c.printed, long=True) and (
                                          len(keys) > 1 or _handout_formula(c.printed)),
                                      row=row is not None and not c.near,
                                      lead=lead))
        return out

    def _named_in(self, what: str, rng: tuple) -> str:
        """``"d_k="`` (raw) when ``what`` starts with a symbol (``"d_k, the width of the keys"``, or just ``"d_k"``)
        that the lines ``rng`` set with ``=``; else "". A lone integer claimed so is the number after it, as an input
        declared so is (:meth:`_aligned_inputs`): not another 3 of the section (the 3 of ``sqrt(3)``)."""
        sym = re.match(r"([\w^\\{}]+)\s*(?:,|$)", (what or "").strip())
        name = _raw(sym.group(1)) + "=" if sym else ""
        return name if name and any(name in self._raw_lines[k] for k in range(rng[0], rng[1] + 1)) else ""

    def _aligned_inputs(self) -> list["_Input"]:
        """The inputs of located sections that are not tables: they join their section's alignment."""
        out = []
        for di, d in enumerate(self.derivations):
            for si, s in enumerate(d.sections):
                loc = self.located.get(id(s))
                if loc is None or loc.start is None:
                    continue
                for g in getattr(s, "inputs", []):
                    if _LABEL.fullmatch((g.at or "").strip()):
                        continue
                    try:
                        value = exact_value(Claim("", "value", g.value, ledger=None))
                    except SymseqError:
                        continue  # reported by _inputs
                    entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
                    shape = value.shape if isinstance(value, sp.MatrixBase) else ()
                    source = Given(d.name, g.location, g.what)
                    rng = self._near(g.near, (loc.start, loc.end)) if g.near else (loc.start, loc.end)
                    if rng is None:
                        continue  # its line is not in the text: missing (_inputs)
                    inp = _Input(g, d, s, value, entries, shape, source, rng,
                                 (d.name, "near", g.near) if g.near else (d.name, id(s)), (di, si, g.seq))
                    # what="H, the number of heads" (or just "d_k") names the symbol the text sets: H
                    if len(entries) == 1 and entries[0].is_Integer:
                        inp.lead = self._named_in(g.what, (loc.start, loc.end))  # the number after d_k=
                    if len(entries) == 1 and g.near and not inp.lead:
                        inp.lead = _anchored(g.near, entries[0])  # the 3 of near="rather than 3"
                    sym = re.match(r"([\w^\\{}]+)(?:\s|,|$)", (g.what or "").strip())
                    inp.symbol = _raw(sym.group(1)) + "=" if sym and len(entries) == 1 else ""
                    inp.lead_in = self._lead_in(loc.start)
                    out.append(inp)
        return out

    def _lead_in(self, start: int) -> tuple | None:
        """The lines that introduce the located section starting at line ``start``: from the first heading
        after the previous located section's heading that no section names (a chapter heading, "One attention
        head, one operation at a time") to the line before ``start``. A section's inputs are often stated there
        ("We will follow one head with d_k=3"). None when no such heading stands between them."""
        located = {loc.heading for loc in self.located.values() if loc is not None and loc.heading is not None}
        before = max((h for h in located if h < start), default=0)
        free = [h.line for h in self.doc.headings if before < h.line < start and h.line not in located]
        return (free[0], start - 1) if free else None

    def _row(self, table, label: str) -> int | None:
        """The line of ``table``'s only data row whose first cell holds ``label`` as a word (case aside), else None:
        "Table 4, sigmoid" names the row "Logistic sigmoid: …"."""
        want = label.strip(" ,").lower()
        if not want:
            return None
        first = [self.doc.line(r).strip().strip("|").split(table.sep)[0].lower() for r in table.rows]
        rows = [r for r, cell in zip(table.rows, first) if re.search(rf"(?<!\w){re.escape(want)}(?!\w)", cell)]
        return rows[0] if len(rows) == 1 else None

    def _reworded(self, near: str, sect) -> tuple | None:
        """(line, line) of the one line that holds the words of ``near``, all or all but one (in the section when it
        is located): where a statement in words whose word was changed ("larger" for "smaller"), or a formula whose
        symbols were, is still printed, so that its missing claim names that line; None when no line or several
        do."""
        want = [w.lower() for w in re.findall(r"[A-Za-z]{2,}", near)]
        if len(want) < 3:
            return None
        lines = range(sect[0], sect[1] + 1) if sect is not None else range(1, self.doc.n + 1)
        n, hits, verbatim = len(want), [], []
        for k in lines:
            have = [w.lower() for w in re.findall(r"[A-Za-z]{2,}", self.doc.line(k))]
            for i in range(len(have) - n + 1):
                if sum(a != b for a, b in zip(have[i:i + n], want)) > 1:
                    continue
                hits.append(k)  # (no word changed: its symbols or numbers were, W_O∈ℝ^{d×hd_v} for ℝ^{hd_v×d})
                # the quotation itself, numbers and all, with that one word replaced: this line, not a neighbour
                # whose words read alike ("at position 2 … smaller" under "at position 1 … larger")
                j = next((j for j in range(n) if have[i + j] != want[j]), None)
                said = near if j is None else re.sub(rf"(?i)\b{re.escape(want[j])}\b", have[i + j], near, count=1)
                if _raw(said).lower() in self._raw_lines[k].lower():
                    verbatim.append(k)
                break
        found = verbatim if len(verbatim) == 1 else hits
        return (found[0], found[0]) if len(found) == 1 else None

    def _quotes(self, near: str, line: int) -> bool:
        """Whether ``line`` holds the text ``near`` as it is (spacing, ``$`` and braces aside), or with a comparison
        word of it printed in other words of the same meaning ("greater than" for "larger than")."""
        have = self._raw_lines[line]
        return any(x in have for x in _quotations(near))

    def _near(self, near: str, sect) -> list | None:
        """The lines holding the text ``near`` (spacing, ``$`` and braces aside; its numbers aside when no line
        holds it with them, so that an edited number there is found wrong at its line): those of the section when
        it has any, else those of the whole file (a line of the section that reads as ``near`` without its numbers
        comes before an exact line elsewhere); None when no line holds it."""
        bare = _bare(_raw(near))
        hold = [i for i in range(1, self.doc.n + 1) if self._quotes(near, i)]
        # its numbers edited or deleted: the lines that read as it without them
        if len(bare) >= 6 and self._bare_lines is None:  # (once, not once per anchored claim)
            self._bare_lines = [_bare(x) for x in self._raw_lines]
        loose = [i for i in range(1, self.doc.n + 1) if bare in self._bare_lines[i]] if len(bare) >= 6 else []
        inside = [[i for i in lines if sect is not None and sect[0] <= i <= sect[1]] for lines in (hold, loose)]
        lines = next((x for x in (*inside, hold, loose) if x), None)
        return [(i, i) for i in lines] if lines else None

    def _find(self, keys, positions, *, soft=False, start_at=None) -> list[int]:
        """Every start index (in ``positions``) where ``keys`` match free tokens in a row."""
        n = len(keys)
        hits = []
        starts = range(len(positions) - n + 1)
        if n and len(positions) > 64:  # where the first key stands, from the index of keys (positions are sorted)
            starts = [k for p in self._by_key().get(keys[0], ()) if (k := bisect.bisect_left(positions, p)) < len(
                positions) - n + 1 and positions[k] == p]
        for k in starts:
            idx = positions[k:k + n]
            if start_at is not None and idx[0] < start_at:
                continue
            if all(self._free(i, soft) and self.toks[i].key == key for i, key in zip(idx, keys)) and \
                    self._compact(idx):
                hits.append(k)
        return hits

    def _by_key(self) -> dict:
        """Token positions by key, in the order of the text (built once)."""
        if self._key_index is None:
            self._key_index = {}
            for i, t in enumerate(self.toks):
                self._key_index.setdefault(t.key, []).append(i)
        return self._key_index

    def _compact(self, idx: list[int]) -> bool:
        """Whether tokens ``idx`` stand close enough to be one printed statement: each on the line of the one
        before it or the next (a formula broken over two lines), not a paragraph apart."""
        return all(self.toks[b].line - self.toks[a].line <= 1 for a, b in zip(idx, idx[1:]))

    def _stream(self, rng, soft=False) -> list[int]:
        """Token positions in ``rng`` that a claim may match (quantities; soft structural ones when asked). The
        tiers are set before matching, so each range's list is built once (a copy is returned)."""
        key = (soft, ("gap", rng.after, rng.before) if isinstance(rng, _Gap) else
               tuple(rng) if isinstance(rng, list) else rng)
        if key not in self._streams:
            self._streams[key] = [i for i in self._lines(rng)
                                  if self.toks[i].tier == "" or (soft and self.toks[i].tier == SOFT)]
        return list(self._streams[key])

    def _take(self, c: _Claim, idx: list[int]):
        c.hits = list(idx)
        self._taken += 1  # the places inferred from the claims found (_between) may move
        for i in idx:
            self.owner.setdefault(i, []).append(c)

    def _raw_match(self, c: _Claim, idx: list[int]) -> bool:
        """Whether the tokens ``idx`` stand where their line reads as the claim's printed string ("x_t=1" takes the
        1 after x_t=, not another 1 of the same line): the text before the first reads as the printed string
        before its first number, the text after the last as the printed string after its last (spacing, ``$``
        and braces aside)."""
        if len(c.raw) < 3 or SIGNED_NUMBER.fullmatch(c.raw):
            return False
        first, last = self.toks[idx[0]], self.toks[idx[-1]]
        if first.line != last.line:
            return False
        base = c.claim.printed.strip().strip("$")
        line = self.doc.line(first.line)
        return _raw(line[:first.start]).endswith(_raw(base[:c.refs[0].start])) and \
            _raw(line[last.end:]).startswith(_raw(base[c.refs[-1].end:]))

    # weights of the alignment: every exact match outweighs every hint, every hint every preference
    _EXACT, _HINT = 10**8, 10**4

    def _align(self, claims: list[_Claim]):
        """Attribute each group's claims (a table's, a ``near=`` anchor's, a section's) to token occurrences by one
        alignment that respects the order of the text: each claim takes at most one occurrence and each token
        serves at most one claim, so equal printed strings of different claims take different occurrences, in
        order. Lone integers at the same place with the same printed string, and claims of one table row with
        the same printed string ("z_t, h_t: 1×H"), form one unit and share theirs (other claims repeating a found one's place and string share it in :meth:`_share`).

        The alignment maximises, in this order: the number of tokens claims print exactly (a property restating
        the handout's formula counts a little less, so that a value claim of the same token outranks it); the number of claims left
        without one whose place in the order holds a number that reads as theirs edited (a *hint*, checked by
        :meth:`_hints` once every exact search is done); and preferences among equal occurrences (a line that
        reads as the printed string; the result after the last ``=`` of a line). Table rows, tables and anchors
        go first, since their lines lie inside a section."""
        groups: dict = {}
        for c in claims:
            if c.rng is not None:
                groups.setdefault(c.group, []).append(c)
        for g in self._inputs_aligned:
            groups.setdefault(g.group, []).append(g)
        for cs in sorted(groups.values(), key=lambda cs: (not isinstance(cs[0].group[1], str),
                                                          len(cs[0].group) < 3 or cs[0].group[2] is None,
                                                          cs[0].order)):
            units: dict = {}
            for c in sorted(cs, key=lambda c: c.order):
                # a lone integer stated twice at one place, or a string twice in one row, is printed once
                key = id(c) if isinstance(c, _Input) else (c.rng, c.claim.printed) if c.row else \
                    c.place if c.weak else id(c)
                units.setdefault(key, []).append(c)
            units = list(units.values())
            if cs[0].group[1] == "near":  # the author pinned the line: any of its numbers, a heading's included,
                # but a label's ("Time step 2: Input = 2" claims the input, not the step); a claim its text spells
                # as a word takes the word
                cs = [c for c in cs if not self._near_word(c)]
                units = [u for u in ([c for c in u if c in cs] for u in units) if u]
                if not cs:
                    continue
                stream = [i for i in self._lines(cs[0].rng) if i not in self.owner and self.toks[i].attribution is None
                          and not self._label(i)]
            else:
                stream = [i for i in self._stream(cs[0].rng) if self._free(i, False)]
            for unit, (idx, edited) in zip(units, self._alignment(units, stream)):
                for c in unit:
                    if idx and edited is None:
                        if isinstance(c, _Input):
                            self._input_take(c, idx)
                        else:
                            self._take(c, idx)
                        c.aligned = True
                    elif idx:
                        c.hint = (idx, edited)

    @staticmethod
    def _near_numeral(c) -> bool:
        """Whether lone integer claim ``c`` is pinned by a ``near=`` text that prints its value as a numeral."""
        return bool(c.claim.near) and bool(re.search(rf"(?<![\d.]){int(c.keys[0])}(?![\d.])", c.claim.near))

    def _near_word(self, c) -> bool:
        """A lone integer claim whose ``near=`` text spells its value as a word and not as a numeral ("its attention
        weight is one"): it takes that word on the anchored line, not another number there ("position 1")."""
        if isinstance(c, _Input) or not c.weak or not c.numeral:
            return False
        value, near = int(c.keys[0]), c.claim.near
        if self._near_numeral(c):
            return False
        spelled = [m for m in scan_words(near) if m.value == value]
        if not spelled:
            return False
        lines = {a for a, _ in c.rng}
        for w in self.doc.words:
            if w.line in lines and w.value == value and id(w) not in self.words_used and \
                    spelled[0].text.lower() == w.text.lower() and _raw(near) in self._raw_lines[w.line]:
                c.words = [w]
                self.words_used.add(id(w))
                return True
        return False

    def _alignment(self, units: list[list[_Claim]], stream: list[int]) -> list[tuple]:
        """For each unit, (token positions, None) of its exact match, (positions, k) of its hint (entry k of the
        run edited), or ((), None): the best order-respecting alignment of ``units`` to ``stream``."""
        m, n = len(units), len(stream)
        keys = [self.toks[i].key for i in stream]
        places = None  # where the inputs may be printed (_input_places), once the first edit asks
        cand: list[dict] = []  # per unit: stream index -> (score, length, edited)
        for u in units:
            c = u[0]
            L, opts = len(c.keys), {}
            if isinstance(c, _Input):
                cand.append({j: [o] for j, o in self._input_options(c, stream).items()})
                continue
            refs = c.refs
            if not c.prop:  # entry by entry: a matrix printed row by row, a table row as a bracketed vector
                flat = [e for r in refs for e in r.entries] if all(r.kind in _ARRAY for r in refs) else []
                for j, (run, bad) in self._runs(flat, stream).items():
                    if len(run) == L and [self.toks[i].key for i in run] == c.keys:
                        continue  # as the claim prints it: the options below
                    if all(self.toks[i].kind == "number" for i in run) and not c.in_table:
                        continue  # a stretch of lone numbers is a vector only in a table's row
                    if bad is None:
                        opts[j] = (self._EXACT * len(run), len(run), None)
                    elif any(self.toks[i].kind != "number" for i in run):  # rows, not a stretch of lone numbers
                        opts[j] = (self._HINT, len(run), ("entry", bad))
            for j in range(n - L + 1):
                if j in opts:
                    continue
                idx = stream[j:j + L]
                if not self._compact(idx):
                    continue
                if keys[j:j + L] == c.keys:
                    if c.needs_raw and not self._raw_match(c, idx) or not self._led(c, idx[0]):
                        continue
                    if c.restated and not self._restates_here(c, self.toks[idx[0]]):
                        continue  # (h_{t,2}+h_{t,4})/2 is not the /2 of (h_{t,0}+h_{t,3})/2
                    # a value outranks a restated formula, unless the text reads as the formula there ("D=4",
                    # "\mathcal L=\frac12(\widehat y-y)^2")
                    weight = self._EXACT - 10 if c.prop and not c.needs_raw and not (
                        c.restated and self._raw_match(c, idx)) else self._EXACT
                    opts[j] = (weight * L + self._preference(c, idx), L, None)
                else:
                    diff = [k for k in range(L) if keys[j + k] != c.keys[k]]
                    if L == 1 and not c.prop and len(diff) == 1 and places is None:
                        places = self._input_places()
                    if len(diff) == 1 and self._may_be_edited(idx[diff[0]]) and \
                            self._edit_of(refs[diff[0]], self.toks[idx[diff[0]]]) and \
                            not (L == 1 and not c.prop and self._prints_an_input(idx[0], places)) and \
                            (not c.prop or L > 1 or self._reads_as(c, refs[0], self.toks[idx[0]])):
                        # a formula restated where the text reads as it outranks a lone number's edit there
                        opts[j] = (self._HINT + (1 if c.restated else 0), L, diff[0])
            if not opts and L == 1 and n == 1 and c.group[1] == "near" and \
                    self.toks[stream[0]].kind == refs[0].kind and self._may_be_edited(stream[0]):
                opts[0] = (self._HINT, 1, 0)  # the pinned line's only number, whatever its digits: the claim's edited
            extra: dict = {}  # further options at a start that already has one (an edit hint there may lose)
            if L >= 3 or L == 2 and c.restated:  # several numbers, one of them deleted: the others still in a row
                for k in range(L):
                    rest = c.keys[:k] + c.keys[k + 1:]
                    for j in range(n - L + 2):
                        if keys[j:j + L - 1] == rest and self._compact(stream[j:j + L - 1]) and \
                                (j not in opts or opts[j][2] is not None) and \
                                (L > 2 or k > 0 and self._restates_here(c, self.toks[stream[j]])):
                            extra.setdefault(j, []).append((self._HINT, L - 1, -1 - k))
            cand.append({j: [o for o in [opts.get(j)] + extra.get(j, []) if o is not None]
                         for j in set(opts) | set(extra)})
        # best[i][j]: the best score aligning units[i:] to stream[j:]
        best = [[0] * (n + 1) for _ in range(m + 1)]
        for i in range(m - 1, -1, -1):
            row, nxt, opts = best[i], best[i + 1], cand[i]
            for j in range(n - 1, -1, -1):
                v = max(nxt[j], row[j + 1])
                for o in opts.get(j, ()):
                    v = max(v, o[0] + nxt[j + o[1]])
                row[j] = v
            row[n] = nxt[n]
        out, j = [], 0
        for i in range(m):
            while True:
                o = next((o for o in cand[i].get(j, ()) if best[i][j] == o[0] + best[i + 1][j + o[1]]), None) \
                    if j < n else None
                if o is not None:
                    out.append((stream[j:j + o[1]], o[2]))
                    j += o[1]
                    break
                if j < n and best[i][j] == best[i][j + 1]:
                    j += 1
                    continue
                out.append(((), None))  # best[i][j] == best[i + 1][j]: the unit is left out
                break
        return out

    def _runs(self, flat: list, stream: list[int], values: list | None = None) -> dict:
        """Runs of tokens (numbers, vectors, matrices) from each start in ``stream`` whose entries, in order, are
        the entries ``flat`` printed (or, with ``values``, equal those exact values): {start: (token positions,
        None)} when all agree, {start: (positions, k)} when only entry k differs and reads as it edited. A run
        spans at most one line break between its tokens, so a matrix printed over several lines is one run."""
        out = {}
        N = len(flat)
        if N < 2:
            return out

        def same(text: str, k: int) -> bool:  # the text's entry reads as entry k (two swapped entries)
            return text == flat[k] if values is None else number_value(text) == values[k]
        for j in range(len(stream)):
            run, ents, prev = [], [], None
            for i in stream[j:]:
                t = self.toks[i]
                if t.kind not in _ARRAY or prev is not None and t.line - prev > 1 or len(ents) + len(t.entries) > N:
                    break
                run.append(i)
                ents += t.entries
                prev = t.line
                if len(ents) == N:
                    break
            if len(ents) != N:
                continue
            if values is None:
                bad = [k for k, (a, b) in enumerate(zip(ents, flat)) if a != b]
            else:
                bad = [k for k, (a, v) in enumerate(zip(ents, values)) if (x := number_value(a)) is None or x != v]
            if not bad:
                out[j] = (run, None)
            elif len(bad) == 1 or len(bad) == 2 and same(ents[bad[0]], bad[1]) and same(ents[bad[1]], bad[0]):
                k = bad[0]
                ref = flat[k] if values is None else _render_like(values[k], ents[k]).replace(MINUS, "-")
                a = Token(0, 0, 0, ref, "number", (ref,))
                b = Token(0, 0, 0, ents[k], "number", (ents[k],))
                if len(bad) == 2 or self._distance(a, b, lone=False) is not None:
                    out[j] = (run, k)
        return out

    def _input_options(self, g: "_Input", stream: list[int]) -> dict:
        """The alignment's options for an input: a token printing its value (exact), or a token with one or two
        entries a digit or two away, or its entries swapped (a hint)."""
        opts = {}
        for j, (run, bad) in self._runs(list(g.entries), stream, values=list(g.entries)).items():
            if len(run) > 1:  # a matrix printed row by row
                opts[j] = (self._EXACT * len(run), len(run), None) if bad is None else (self._HINT, len(run), 0)
        # a number the text names by the input's symbol (Wi = 0.6, or the Wi of Wi, Whi, bi = 0.6, 0.2, 0) is
        # the input's, edited or not, wherever the same value stands unnamed
        named = {j for j, i in enumerate(stream) if self._named(g, i) and len(self.toks[i].entries) == 1}
        # stated by its symbol where its section is introduced (We retain T=7, …): no edit of it in the section
        introduced = not named and g.lead_in is not None and any(
            self._named(g, i) and self._same(self.toks[i], g.entries, g.shape) for i in self._lines(g.lead_in))
        for j, i in enumerate(stream):
            t = self.toks[i]
            if j in opts or named and j not in named:
                continue
            if len(t.entries) != len(g.entries) or t.kind == "shape" or self._named_other(g, i):
                continue
            if self._same(t, g.entries, g.shape) and self._led(g, i):
                opts[j] = (self._EXACT, 1, None)
            elif not introduced and (self._edited_entries(t, g.entries, lone=True) or self._swapped(t, g.entries)):
                opts[j] = (self._HINT, 1, 0)
        return opts

    @staticmethod
    def _swapped(t: Token, entries) -> bool:
        """Whether ``t`` prints the values ``entries`` in another order (two entries exchanged, say)."""
        vals = [number_value(e) for e in t.entries]
        if len(entries) < 2 or any(v is None for v in vals):
            return False
        try:
            return sorted(vals) == sorted(entries) and vals != list(entries)
        except TypeError:
            return False

    def _input_take(self, g: "_Input", idx: list[int]):
        """Input ``g`` printed at ``idx`` (one token, or one per row of a matrix): covered, or wrong at the first
        entry that differs (numbered across the whole value)."""
        g.hits = list(idx)
        offset = 0
        for i in idx:
            t = self.toks[i]
            self.owner.setdefault(i, []).append(g.given)
            want = g.entries[offset:offset + len(t.entries)]
            bad = [k for k, (e, v) in enumerate(zip(t.entries, want)) if (x := number_value(e)) is None or x != v]
            if not bad:
                t.attribution = Attribution("covered", g.source)
            else:
                k = bad[0]
                self._input_erratum(t, t.entries[k], want[k], g.source,
                                    entry_label(offset + k, (len(g.entries),)))
            offset += len(t.entries)
        self._inputs_done.add(id(g.given))

    def _entry_hint(self, c: _Claim, idx: list[int], k: int):
        """Claim ``c`` printed entry by entry over the tokens ``idx`` with its entry ``k`` edited: checked restated
        with the text's entry (the k-th number of its printed string replaced). If that holds the tokens are
        covered; if not, that entry is wrong, against the claim's own print of it."""
        ents = [e for i in idx for e in self.toks[i].entries]
        base = c.claim.printed.strip().strip("$")
        nums = list(SIGNED_NUMBER.finditer(base))
        if len(nums) != len(ents):
            return  # the printed string holds more than its entries: no safe restatement
        m = nums[k]
        trial = c.claim.restated(base[:m.start()] + ents[k] + base[m.end():])
        r = trial.check(self.dps)
        if r.status not in ("ok", "mismatch"):
            return
        self._take(c, idx)
        c.aligned = True
        if r.status == "mismatch":
            offset = 0
            for i in idx:
                t = self.toks[i]
                if offset <= k < offset + len(t.entries):
                    want = list(t.entries)
                    want[k - offset] = _plain_number(m.group(0))
                    c.trial, c.edit = trial, (i, Token(0, 0, 0, "", t.kind, tuple(want), t.shape))
                    break
                offset += len(t.entries)

    def _may_be_edited(self, i: int) -> bool:
        """Whether token ``i`` may be a claim's number edited: a quantity, or a number of a heading (which a claim
        pinned to its line may print); never an exponent, a label or another structural number."""
        t = self.toks[i]
        return t.tier != HARD or (t.rule == "heading" and t.attribution is None)

    def _led(self, c: _Claim, i: int) -> bool:
        """Whether token ``i`` may be claim (or input) ``c``'s by the name its location gives it ("d_v = 2" wants the
        text to read d_v= before the token); True for one without."""
        return not c.lead or self._set_by(i, c.lead)

    def _named(self, g: "_Input", i: int) -> bool:
        """Whether the text reads input ``g``'s symbol and ``=`` right before token ``i`` (d_k=3)."""
        return bool(g.symbol) and self._set_by(i, g.symbol)

    def _named_other(self, g: "_Input", i: int) -> bool:
        """Whether the text names token ``i`` by the symbol of another input of ``g``'s section (the 1 of
        ``B, T, D, H, C = 1, 3, 2, 2, 1`` is C's, not B's, though B's own 1 is gone)."""
        return bool(g.symbol) and any(x is not g and x.section is g.section and x.symbol and x.symbol != g.symbol
                                      and self._set_by(i, x.symbol) for x in self._inputs_aligned)

    def _set_by(self, i: int, name: str) -> bool:
        """Whether the text sets token ``i`` by ``name`` (raw, with ``=``): ``d_k=3``, or the ``bf`` of
        ``Wf, Whf, bf = 0.5, 0.1, 0``."""
        if i not in self._setters:
            t = self.toks[i]
            line = self.doc.line(t.line)
            self._setters[i] = (_tuple_name(line, t), _raw(line[:t.start]))
        tuple_name, before = self._setters[i]
        return tuple_name == name if tuple_name is not None else before.endswith(name)

    def _restates_here(self, c: _Claim, t: Token) -> bool:
        """Whether a restated formula of several numbers may start at token ``t``: the text before it reads as the
        formula before its first number (when the formula prints four characters or more there)."""
        ref = c.refs[0]
        return len(_raw(c.claim.printed.strip().strip("$")[:ref.start])) < 4 or self._reads_as(c, ref, t)

    def _reads_as(self, c: _Claim, ref: Token, t: Token) -> bool:
        """Whether the text around token ``t`` on its line reads as the claim's printed string around its number
        ``ref``: a restated formula of one number is told edited only so. The eight characters before must
        agree (spacing aside; at least four of them), or, for a short formula (``T=1``), all it prints before
        and after its number."""
        base = c.claim.printed.strip().strip("$")
        line = self.doc.line(t.line)
        before = _raw(line[:t.start])
        if c.quoted:
            want, after = _raw(base[:ref.start]), _raw(base[ref.end:])
            return len(want + after) >= 2 and before.endswith(want) and _raw(line[t.end:]).startswith(after)
        want = _raw(base[:ref.start])[-8:]
        return len(want) >= 4 and before.endswith(want)

    def _preference(self, c: _Claim, idx: list[int]) -> int:
        """Among occurrences that print a claim exactly: one on a line that reads as the printed string (2), one
        after the last ``=`` of its line (1), where ``a = … = b`` prints a result."""
        score = 2 if self._raw_match(c, idx) else 0
        first = self.toks[idx[0]]
        eq = self.doc.line(first.line).rfind("=")
        return score + (1 if eq >= 0 and first.start > eq else 0)

    def _edit_of(self, ref: Token, t: Token) -> bool:
        """Whether the text's token ``t`` may be the claim's token ``ref`` edited: a digit or two changed (one
        digit included; the alignment's order decides), the sign flipped, or entries of a vector swapped."""
        if self._distance(ref, t, lone=False) is not None:
            return True
        if ref.kind == t.kind and ref.kind in ("vector", "matrix") and ref.shape == t.shape and \
                ref.entries != t.entries and sorted(ref.entries) == sorted(t.entries):
            return True
        return False

    def _hinted(self, c: _Claim) -> bool:
        """Whether the alignment expects claim ``c`` at tokens that no claim has taken since."""
        pinned = not isinstance(c, _Input) and c.group[1] == "near"  # any token of a pinned line, a heading's too
        return c.hint is not None and all(i not in self.owner and self.toks[i].attribution is None if pinned else
                                          self._free(i, True) for i in c.hint[0])

    def _in_code(self, g: "_Input") -> bool:
        """Whether input ``g``'s hint is a one-digit number (which any other digit is as close to) while ``g`` is
        printed as it is in code of its section (``h = 0``), which the alignment does not read: then that number
        is not its."""
        if not all(len(re.sub(r"\D", "", e)) < 2 for i in g.hint[0] for e in self.toks[i].entries):
            return False
        return any(self.toks[i].tier == SOFT and self._free(i, True) and self._same(self.toks[i], g.entries, g.shape)
                   and (not g.symbol or self._named(g, i)) for i in self._stream(g.sect_rng, True))

    def _hints(self, claims: list[_Claim]):
        """Claims the alignment left without an exact occurrence but with a hint whose tokens are still free:
        each is checked restated with the text's number. If it holds it is covered; if not the number is wrong."""
        for g in self._inputs_aligned:
            if not g.hits and self._hinted(g) and not self._in_code(g):
                self._input_take(g, g.hint[0])
                g.aligned = True
        for c in claims:
            if c.hits or c.words or not self._hinted(c):
                continue
            idx, k = c.hint
            if isinstance(k, tuple):  # entry by entry, entry k[1] edited: the claim restated with the text's
                self._entry_hint(c, list(idx), k[1])
                continue
            if k < 0:  # the statement with its number k deleted: missing there
                self._take(c, list(idx))
                c.aligned, c.dropped = True, -1 - k
                continue
            if c.prop:  # a restated formula printed with another number than the one the derivation checks
                self._take(c, list(idx))
                c.aligned, c.edit = True, (idx[k], c.refs[k])
                continue
            if len(idx) == 1:
                trial = _trial(c.claim, self.toks[idx[0]])
            else:
                trial = _with_token(c.claim, c.refs[k], self.toks[idx[k]].text)
            if trial is None:
                continue
            r = trial.check(self.dps)
            if r.status == "ok":
                self._take(c, list(idx))
                c.aligned, c.trial = True, None
            elif r.status == "mismatch":
                self._take(c, list(idx))
                c.aligned = True
                self._misprint(c, trial, idx, k)

    def _bounds(self, c: _Claim) -> tuple[int, int]:
        """Token positions (lo, hi) between which claim ``c`` must sit: after the numbers of the claims before it
        in its table or section that are found, before those of the claims after it. (-1, n) when there are
        none, or when they cross (the derivation states them in another order than the text)."""
        same = self._group_claims.get(c.group, [])
        lo = max((o.hits[-1] for o in same if o.order < c.order and o.hits), default=-1)
        hi = min((o.hits[0] for o in same if o.order > c.order and o.hits), default=len(self.toks))
        return (lo, hi) if lo < hi else (-1, len(self.toks))

    def _within(self, c: _Claim, stream: list[int], hits: list[int]) -> list[int]:
        """The ``hits`` (indices into ``stream``) that lie within :meth:`_bounds` of ``c``."""
        lo, hi = self._bounds(c)
        return [k for k in hits if lo < stream[k] and stream[k + len(c.keys) - 1] < hi]

    def _share(self, claims: list[_Claim]):
        seen = {}
        for c in claims:
            if c.hits or c.words:
                seen.setdefault(c.place, c)
        for c in claims:
            if not c.hits and not c.words and not self._hinted(c):  # a hinted claim is decided at its own place
                other = seen.get(c.place)
                if other is not None:
                    if other.hits:
                        self._take(c, other.hits)
                        self._as_read(c)
                    else:
                        c.words = other.words

    def _as_read(self, c: _Claim):
        """Claim ``c`` sharing the tokens another claim found with one of its numbers edited (p_0 … p_6 printed as
        one formula, whose t = 0 case holds whatever the number): checked restated as the text reads there."""
        refs = c.refs
        diff = [k for k, i in enumerate(c.hits) if k < len(refs) and self.toks[i].key != c.keys[k]]
        if not diff or len(c.hits) != len(refs):
            return
        trial = c.claim
        for k in reversed(diff):  # from the end, so that the earlier tokens keep their place in the string
            trial = _with_token(trial, refs[k], self.toks[c.hits[k]].text)
        r = trial.check(self.dps)
        if r.status == "mismatch":
            self._misprint(c, trial, c.hits, diff[0])
        elif r.status == "ok":
            c.trial = trial

    def _anywhere(self, claims: list[_Claim], *, wide: bool, last: bool = False):
        """Claims not found in order: the whole range and the section; with ``wide``, the derivation's part
        of the text and the whole file (lone integers stay in their section, where they may be words). A
        section without a heading is searched with ``wide`` between the numbers found around it, and with
        ``last`` (after its edited numbers are looked for there) in the derivation's part and the file."""
        anchors = set()
        if wide and not last:  # a section without a heading: its numbers printed once in the file place it first
            whole = self._stream((1, self.doc.n))
            anchors = {id(c) for c in claims if c.sect_rng is None and not c.weak and not c.prop
                       and len(self._find(c.keys, whole)) == 1}
        claims = sorted(claims, key=lambda c: (c.weak, id(c) not in anchors, c.order))
        for c in claims:
            if c.hits or c.words or c.prop and wide:
                continue
            if wide and c.sect_rng is not None:
                continue  # a claim of a located section is attributed within its section only
            if c.weak:  # the same printed integer at the same place: one occurrence (as in the ordered pass)
                same = next((o for o in self._all_claims if o.hits and o.place == c.place), None)
                if same is not None:
                    self._take(c, same.hits)
                    self._as_read(c)
                    continue
            if c.prop:  # a statement of the handout's formula: only in its own section
                ranges = [c.sect_rng]
            elif wide and c.sect_rng is None and not last:
                ranges = [self._between(c.section) or c.dspan]
            elif last and self._between(c.section) is not None:
                ranges = []  # the numbers around its section place it: a claim not there is missing there
            elif wide and c.weak:
                ranges = [c.dspan]  # a lone integer stays within its derivation's part of the text
            elif wide:
                ranges = [c.dspan, (1, self.doc.n)]
            else:
                ranges = [c.rng] if c.row else [c.rng, c.sect_rng]  # a table row's claim stays in its row
            bounded = not wide  # between the numbers found for the claims around it in its table or section
            done = False
            for rng in ranges:
                if rng is None:
                    continue
                for soft in (False, True):
                    stream = self._stream(rng, soft)
                    hits = self._find(c.keys, stream, soft=soft)
                    if c.needs_raw or c.weak and not c.numeral:
                        # a lone integer of a formula (\frac{1}{d}) only where the text reads as the formula
                        hits = [k for k in hits if self._raw_match(c, stream[k:k + len(c.keys)])]
                    hits = [k for k in hits if self._led(c, stream[k])]
                    if c.weak:  # a lone integer is not a label's number ("row 2"): that is where it was deleted
                        hits = [k for k in hits if not self._label(stream[k])]
                    if bounded:
                        hits = self._within(c, stream, hits)
                    if hits:
                        first = c.sect_rng or c.rng or (1, 1)
                        anchor = first[0][0] if isinstance(first, list) else first[0]  # (a near= anchor's: lines)
                        hits.sort(key=lambda k: (not self._raw_match(c, stream[k:k + len(c.keys)]),
                                                 self.toks[stream[k]].line < anchor,
                                                 abs(self.toks[stream[k]].line - anchor)))
                        self._take(c, stream[hits[0]:hits[0] + len(c.keys)])
                        done = True
                        break
                if done:
                    break
            words_in = (ranges[0] if ranges else None) if wide else c.rng if c.row or c.in_table else c.sect_rng
            # a number written as a word stands for a claim printed as that bare numeral, not for one of a formula,
            # nor for one whose near= line prints it as a numeral ("between \(-1\) and \(1\)")
            if not done and c.weak and not c.prop and not c.lead and c.numeral and not self._near_numeral(c) and \
                    words_in is not None and (wide or c.sect_rng):
                value = int(c.keys[0])
                ranges = words_in if isinstance(words_in, list) else [words_in]
                heading = {h.line for h in self.doc.headings}
                lo, hi = self._bounds(c)
                after = self.toks[lo].line if lo >= 0 else 0
                before = self.toks[hi].line if hi < len(self.toks) else self.doc.n
                for w in self.doc.words:
                    if bounded and not after <= w.line <= before:
                        continue
                    if any(a <= w.line <= b for a, b in ranges) and w.value == value and w.line not in heading and id(w) not in self.words_used:
                        c.words = [w]
                        self.words_used.add(id(w))
                        break

    # -- reported numbers and inputs
    def _reported(self, *, pinned: bool):
        """Numbers a derivation reports rather than checks: with ``pinned``, those it quotes (``"12+ layers"``),
        before any claim looks for its tokens; else whole paragraphs, whose claimed numbers stay claims."""
        for d in self.derivations:
            for s in d.sections:
                loc = self.located.get(id(s))
                sect = (loc.start, loc.end) if loc is not None and loc.start is not None else None
                for r in getattr(s, "reported_numbers", []):
                    if bool(r.paragraph) == pinned:
                        continue
                    for i in self._reported_tokens(r, sect):
                        t = self.toks[i]
                        if i not in self.owner and t.attribution is None and t.tier != HARD:
                            t.attribution = Attribution("reported", Reported(r.reason, d.name, r.location))

    def _reported_tokens(self, r, sect) -> list[int]:
        table = self.doc.table(r.where) if _LABEL.fullmatch(r.where) else None
        if table is not None:
            return self._lines((table.first, table.last))
        out = []
        for rng in (sect, (1, self.doc.n)):
            if rng is None:
                continue
            for line in range(rng[0], rng[1] + 1):
                text = self.doc.line(line)
                k = text.find(r.where)
                while k >= 0:
                    if r.paragraph:
                        out += self._lines(self.doc.paragraph_of(line))
                    else:
                        out += [i for i in self._lines((line, line))
                                if k <= self.toks[i].start and self.toks[i].end <= k + len(r.where)]
                    k = text.find(r.where, k + 1)
            if out:
                return out
        return out

    def _inputs(self):
        """Inputs take their tokens in rounds: as printed in their section, as printed elsewhere (the
        derivation's part of the text; for a vector or matrix, then the whole file), then as edited in their
        section (:meth:`_input_edited`); the rest are missing."""
        pending = []
        for d in self.derivations:
            for s in d.sections:
                loc = self.located.get(id(s))
                sect = (loc.start, loc.end) if loc is not None and loc.start is not None else None
                for g in getattr(s, "inputs", []):
                    if id(g) in self._inputs_done:
                        continue
                    lines = self._near(g.near, sect) if g.near else None
                    if g.near and lines is None:
                        self.report.missing.append(Missing(f"{d.name}::{g.location}", "", g.location,
                                                           f"{g.what}: no line reads {g.near!r}", kind="input",
                                                           lines=sect))
                        continue
                    p = self._input(d, g, lines or sect or self._between(s))
                    if p is not None:
                        pending.append(p)
        for stage in range(3):  # each stage for every input before the next: one's lead-in is not taken by another
            pending = [p for p in pending if not self._input_found(p, stage)]
        for p in pending:
            self._input_edited(*p)

    def _input(self, d, g, sect):
        """What the rounds of :meth:`_inputs` need to find ``g`` (None once a table input or an error is handled)."""
        try:
            value = exact_value(Claim("", "value", g.value, ledger=None))
        except SymseqError as exc:
            self.report.missing.append(Missing(f"{d.name}::{g.location}", "", g.location, f"{g.what}: {exc}",
                                               kind="input"))
            return None
        m = _LABEL.fullmatch((g.at or "").strip())
        table = self.doc.table(m.group(0)) if m else None
        source = Given(d.name, g.location, g.what)
        if table is not None:
            self._input_table(value, table, source, g)
            return None
        entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
        return d, g, sect, value, entries, source

    def _input_found(self, p, stage: int) -> bool:
        """Take the free token printing input ``p`` as it is: in its section (stage 0), anywhere in it or in the
        lines that introduce it (stage 1), elsewhere (stage 2)."""
        d, g, sect, value, entries, source = p
        shape = value.shape if isinstance(value, sp.MatrixBase) else ()
        anchor = (sect[0][0] if isinstance(sect, list) else sect[0]) if sect else 1
        placed = next((x for x in self._inputs_aligned if x.given is g), None)
        # stage 1: a located section's input anywhere in its section, out of order (a lone integer, which any
        # other number edited could be, only where the text names it: "d_k=3"), then where the lines that
        # introduce the section read its symbol and = before it; stage 2: so anywhere in the derivation's part of
        # the text; an input of a section without a heading in its derivation's part of the text (a vector in the
        # file)
        span = self.report.spans.get(d.name)
        if placed is not None:  # an input of a located section
            ranges = [(sect,), (sect, placed.lead_in), (span,)] if placed.symbol else [(sect,), (sect,), ()]
        else:
            ranges = [(sect,), (), (span, (1, self.doc.n)) if len(entries) > 1 else (span,)]
        wide = stage > 0
        lone = placed is not None and len(entries) == 1 and entries[0].is_Integer
        # in its section, a lone integer stands between the numbers of its neighbours (elsewhere, it cannot be told)
        lo, hi = self._bounds(placed) if lone and not wide else (-1, len(self.toks))
        for rng in ranges[stage]:
            if rng is None:
                continue
            # the number the text names by its symbol, if any is free, is the input's
            named = {i for i in self._stream(rng, True) if self._named(placed, i) and self._free(i, True)} \
                if placed is not None and len(entries) == 1 else set()
            for soft in (False, True):
                stream = [i for i in self._stream(rng, soft) if lo < i < hi and (placed is None or self._led(placed, i))
                          and (placed is None or (rng == sect and not (wide and lone)) or self._named(placed, i))
                          and (placed is None or not self._named_other(placed, i))]
                if rng != sect:  # outside the section: the nearest occurrence to it
                    stream = sorted(stream, key=lambda k: abs(self.toks[k].line - anchor))
                if named:
                    stream = [i for i in stream if i in named]
                for i in stream:
                    run = [i] if self._free(i, soft) and self._same(self.toks[i], entries, shape) else \
                        self._row_run(i, entries, shape, soft)
                    if run:
                        for k in run:
                            self.owner.setdefault(k, []).append(g)
                            self.toks[k].attribution = Attribution("covered", source)
                        if placed is not None:
                            placed.hits = [i]  # it bounds its neighbours (_bounds)
                        return True
        return False

    def _input_edited(self, d, g, sect, value, entries, source):
        """An input not printed as it is: a free token of its section with a minority of entries changed, or the
        section's only free token of its size whose changed entries are each a digit or two away (the only one
        the text names by the input's symbol, in its section or in the lines that introduce it, when there is
        one); else missing."""
        stream = [i for i in self._stream(sect, True) if self._free(i, True)] if sect is not None else []
        shape = value.shape if isinstance(value, sp.MatrixBase) else ()
        for i in stream:  # a matrix printed row by row (a nested list in code) with a minority of entries changed
            run = self._row_run(i, entries, shape, True, edited=True)
            if run:
                vals = [number_value(e) for k in run for e in self.toks[k].entries]
                bad = [k for k, (v, e) in enumerate(zip(vals, entries)) if v is None or _differ(v, e)]
                r, k = divmod(bad[0], shape[1])
                self._input_erratum(self.toks[run[r]], self.toks[run[r]].entries[k], entries[bad[0]], source,
                                    entry_label(bad[0], shape))
                for j in run:
                    self.owner.setdefault(j, []).append(g)
                    if j != run[r]:
                        self.toks[j].attribution = Attribution("covered", source)
                return
        if len(entries) > 1:
            for i in stream:
                t = self.toks[i]
                if len(t.entries) == len(entries):
                    vals = [number_value(e) for e in t.entries]
                    bad = [k for k, (v, e) in enumerate(zip(vals, entries)) if v is None or _differ(v, e)]
                    if 0 < len(bad) <= 2 and len(bad) * 2 < len(entries):
                        k = bad[0]
                        self._input_erratum(t, t.entries[k], entries[k], source, entry_label(k, t.shape))
                        self.owner.setdefault(i, []).append(g)
                        return
        placed = next((x for x in self._inputs_aligned if x.given is g), None)
        # a lone number between the numbers of its neighbours (B of B, T, D, H, C = , 3, 2, 2, 1 is not a 0.5 below)
        lo, hi = self._bounds(placed) if placed is not None and len(entries) == 1 else (-1, len(self.toks))
        close = [(i, bad) for i in stream if lo < i < hi and (bad := self._edited_entries(self.toks[i], entries))]
        # the one the text names (bf = 1, or the bf of Wf, Whf, bf = 0.5, 0.1, 1), a one-digit number included
        # or, by its symbol, where its section is introduced (We retain T=8, … for T = 7)
        lead = [i for i in self._stream(placed.lead_in, True) if self._free(i, True)] \
            if placed is not None and placed.symbol and placed.lead_in else []
        named = [(i, bad) for i in stream + lead if placed is not None and self._named(placed, i)
                 and (bad := self._edited_entries(self.toks[i], entries, lone=True))]
        if len(named) == 1:
            close = named
        if len(close) == 1:
            i, bad = close[0]
            t, k = self.toks[i], bad[0]
            self._input_erratum(t, t.entries[k], entries[k], source, entry_label(k, (len(entries),)))
            self.owner.setdefault(i, []).append(g)
            return
        lines = self._expected(placed) if placed is not None else sect.expected if isinstance(sect, _Gap) else \
            (sect[0][0], sect[-1][1]) if isinstance(sect, list) else tuple(sect) if sect is not None else None
        self.report.missing.append(Missing(source.source, _show(value), g.location, g.what, kind="input", lines=lines))

    @staticmethod
    def _edited_entries(t: Token, entries, lone: bool = False) -> list[int]:
        """The entries of ``t`` that differ from ``entries`` when at most two do and each is printed within two
        edited characters of the value printed the same way ([0,-2] for [0,-1], 0.7 for 0.8); else [].
        A lone one-digit number is never taken for an edited one (9 is as close to 8 as to any digit), unless
        ``lone`` (where the alignment's order, not the digits, places it)."""
        if t.kind == "shape" or len(t.entries) != len(entries):
            return []
        bad = []
        for k, (e, v) in enumerate(zip(t.entries, entries)):
            x = number_value(e)
            if x is None:
                return []
            if _differ(x, v):
                if "√" in e and getattr(v, "is_Rational", isinstance(v, int)):
                    return []  # a root printed is no edit of a rational value (√4 is not 7 edited)
                shown = _render_like(v, e).replace(MINUS, "-")
                if _levenshtein(e, shown) > 2:
                    return []
                bad.append(k)
        if not lone and len(bad) == len(entries) and any(len(re.sub(r"\D", "", e)) < 2 for e in t.entries):
            return []  # nothing else agrees, and any other one-digit number is as close: no edit can be told apart
        return bad if len(bad) <= 2 else []

    def _row_run(self, i: int, entries, shape, soft: bool, *, edited: bool = False) -> list[int]:
        """The tokens ``i``, ``i + 1``, … that print a matrix input's rows in order, one free vector each (a
        nested list in code, ``[[0.1, 0.2], [0.3, 0.4]]``, or an array NumPy prints row by row); [] if they do not.
        With ``edited``, the run prints it with at least one and at most two entries changed, fewer than half."""
        if len(shape) != 2 or shape[0] < 2 or shape[1] < 2 or i + shape[0] > len(self.toks):
            return []
        run = list(range(i, i + shape[0]))
        if not all(self._free(k, soft) and self.toks[k].kind == "vector" and len(self.toks[k].entries) == shape[1]
                   for k in run) or self.toks[run[-1]].line - self.toks[i].line > shape[0]:
            return []
        vals = [number_value(e) for k in run for e in self.toks[k].entries]
        bad = sum(1 for v, e in zip(vals, entries) if v is None or _differ(v, e))
        return run if (0 < bad <= 2 and 2 * bad < len(entries) if edited else bad == 0) else []

    @staticmethod
    def _same(t: Token, entries, shape) -> bool:
        if len(t.entries) != len(entries):
            return False
        if t.kind == "matrix" and shape and tuple(t.shape) != tuple(shape):
            return False
        if t.kind == "shape":
            return False
        for e, v in zip(t.entries, entries):
            x = number_value(e)
            if x is None or _differ(x, v):
                return False
        return True

    def _input_table(self, value, table, source, g):
        rows = list(table.rows)
        if not isinstance(value, sp.MatrixBase):
            value = sp.Matrix([[value]])
        for r, line in enumerate(rows[:value.shape[0]]):
            cells = [i for i in self._lines((line, line)) if self.toks[i].tier != HARD and self.toks[i].attribution is None]
            n = len(self.doc.line(line).strip().strip("|").split(table.sep))
            # the value's columns are the row's last cells: one left empty (a number deleted) is missing there
            want_cells = range(n - value.shape[1], n)
            have = {self.doc.cell_index(self.toks[i]) for i in cells}
            empty = [c - want_cells.start for c in want_cells if c not in have]
            if empty and len(cells) < value.shape[1]:
                self.report.missing.append(Missing(source.source, _show(value[r, empty[0]]), g.location,
                                                   f"{g.what}: row {r}, column {empty[0]}", kind="input",
                                                   lines=(line, line)))
            for j, i in enumerate(cells[:value.shape[1]]):
                t = self.toks[i]
                want = value[r, j]
                got = number_value(t.entries[0]) if t.is_scalar else None
                self.owner.setdefault(i, []).append(g)
                if got is not None and not _differ(got, want):
                    t.attribution = Attribution("covered", source)
                else:
                    self._input_erratum(t, t.entries[0], want, source, f"row {r}, column {j}")

    def _input_erratum(self, t: Token, printed: str, want, source: Given, where: str):
        correct = _render_like(want, printed)
        t.attribution = Attribution("wrong", source)
        self.report.errata.append(Erratum(t.line, printed, correct, (f"{where}: " if where else "") +
                                          digit_fault(printed, correct),
                                          source.source, _show(want), t.context, kind="input"))

    # -- edited numbers
    def _edited(self, claims: list[_Claim], *, unlocated: bool = False):
        """With ``unlocated``, the claims of sections without a heading, in the place :meth:`_between` infers
        for their section (once the numbers around it are found)."""
        for c in claims:
            rng = self._between(c.section) if unlocated and c.rng is None else c.rng
            if c.hits or c.words or c.prop or rng is None:
                continue
            if len(c.keys) > 1:
                self._edited_run(c, rng)
                continue
            cand = self._gap(c, rng)
            if cand is None:
                continue
            places = self._input_places()
            cand = [i for i in cand if not self._prints_an_input(i, places)]
            best = None
            for i in cand:
                t = self.toks[i]
                dist = self._distance(c.refs[0], t)
                if dist is not None and (best is None or dist < best[0]):
                    best = (dist, i)
            if best is None:
                continue
            i = best[1]
            t = self.toks[i]
            trial = _trial(c.claim, t)
            if trial is None:
                continue
            r = trial.check(self.dps)
            if r.status == "ok":
                self._take(c, [i])
                c.trial = None
            elif r.status == "mismatch":
                self._take(c, [i])
                self._misprint(c, trial, [i], 0)

    def _misprint(self, c: _Claim, trial: Claim, idx: list, k: int):
        """Claim ``c`` restated as ``trial`` with the text's token ``idx[k]`` does not hold: the token is wrong. When
        the token is not the claim's whole printed string (an entry of a vector, a number inside a formula) and
        the claim as the derivation prints it holds, the erratum names the entry at fault against that print."""
        c.trial = trial
        ref = c.refs[k]
        whole = (ref.start, ref.end) == (0, len(c.claim.printed.strip().strip("$")))
        if len(idx) > 1 or (len(ref.entries) > 1 or not whole) and c.claim.check(self.dps).status == "ok":
            c.edit = (idx[k], ref)

    def _input_places(self) -> list:
        """Where each declared input may be printed, as the text is attributed now: {input index (in
        ``_input_values``): token positions or line range} for :meth:`_prints_an_input`; computed once per claim
        found, not per token."""
        return self._memo("inputs", self._input_places_now)

    def _input_places_now(self) -> list:
        if self._input_values is None:
            self._input_values = []
            for d in self.derivations:
                for s in d.sections:
                    for g in getattr(s, "inputs", []):
                        try:
                            v = exact_value(Claim("", "value", g.value, ledger=None))
                        except SymseqError:
                            continue
                        entries = list(v) if isinstance(v, sp.MatrixBase) else [v]
                        self._input_values.append((s, entries, v.shape if isinstance(v, sp.MatrixBase) else ()))
        places = {}
        for k, (s, entries, shape) in enumerate(self._input_values):
            loc = self.located.get(id(s))
            rng = (loc.start, loc.end) if loc is not None and loc.start is not None else self._between(s)
            if rng is not None:
                places[k] = range(rng.after + 1, rng.before) if isinstance(rng, _Gap) else rng
        return places

    def _prints_an_input(self, i: int, places: list) -> bool:
        """Whether token ``i`` prints, in the place of its section, the value of an input a derivation declares
        (then it is that input's, not an edited claim's); ``places`` from :meth:`_input_places`."""
        printed = self._same_cache.get(i)
        if printed is None:  # the inputs whose value token i prints, wherever they are
            t = self.toks[i]
            if self._inputs_by_size is None:
                self._inputs_by_size = {}
                for k, (_, entries, _) in enumerate(self._input_values):
                    self._inputs_by_size.setdefault(len(entries), []).append(k)
            printed = self._same_cache[i] = {k for k in self._inputs_by_size.get(len(t.entries), ())
                                             if self._same(t, *self._input_values[k][1:])}
        if not printed:
            return False
        line = self.toks[i].line
        for k in printed:
            where = places.get(k)
            if where is not None and (i in where if isinstance(where, range) else where[0] <= line <= where[1]):
                return True
        return False

    def _gap(self, c: _Claim, rng) -> list[int]:
        stream = self._stream(rng, soft=True)
        same = self._group_claims.get(c.group, [])
        before = [o for o in same if o.order < c.order and o.hits and o.hits[-1] in stream]
        after = [o for o in same if o.order > c.order and o.hits and o.hits[0] in stream]
        lo = max((o.hits[-1] for o in before), default=-1)
        hi = min((o.hits[0] for o in after), default=10**9)
        if c.weak and (lo < 0 or hi == 10**9):
            return None  # a lone integer is looked for only between two found neighbours
        gap = [i for i in stream if lo < i < hi and self._free(i, True)]
        if c.weak:
            return gap
        return gap or [i for i in stream if self._free(i, True)]

    def _edited_run(self, c: _Claim, rng):
        """A claim of several numbers (1×1.131+1×0) printed with one of them edited: the only run of free tokens
        in its range that has every other number as the claim prints it and that one a digit or two away (the
        numbers around it tell even a one-digit edit apart). It is checked as the claim restated with it."""
        refs = c.refs
        stream, n, found = self._stream(rng, soft=True), len(c.keys), []
        for k in range(len(stream) - n + 1):
            idx = stream[k:k + n]
            diff = [j for j, (i, key) in enumerate(zip(idx, c.keys)) if self.toks[i].key != key]
            if len(diff) == 1 and all(self._free(i, True) or self._lent(i) for i in idx) and \
                    self._distance(refs[diff[0]], self.toks[idx[diff[0]]], lone=False) is not None:
                found.append((idx, diff[0]))
        if len(found) != 1:
            return
        idx, j = found[0]
        trial = _with_token(c.claim, refs[j], self.toks[idx[j]].text)
        r = trial.check(self.dps)
        if r.status in ("ok", "mismatch"):
            self._give_back(idx)
            self._take(c, idx)
        if r.status == "mismatch":
            self._misprint(c, trial, idx, j)

    def _lent(self, i: int) -> bool:
        """Whether token ``i`` is held only by claims of one number, which may stand elsewhere: the edited run of a
        claim of several numbers (``2×1.131+1×0`` for ``1×1.131+1×0``) takes it from them, since while that claim
        was missing a claim of 1.131 could take the run's 1.131, and one of 2 its edited 2."""
        owners = self.owner.get(i)
        t = self.toks[i]
        return bool(owners) and t.attribution is None and (t.tier == "" or t.tier == SOFT) and \
            all(isinstance(o, _Claim) and len(o.keys) == 1 and not o.prop for o in owners)

    def _give_back(self, idx: list[int]):
        """Release the tokens ``idx`` from the claims of one number holding them (:meth:`_lent`); those claims are
        placed again by :meth:`_replace_released`."""
        for i in idx:
            for o in self.owner.pop(i, []):
                o.hits = [h for h in o.hits if h != i]
                self._released.append(o)
                self._taken += 1

    def _replace_released(self):
        """Place again, where they are looked for first, the claims an edited run took their tokens from."""
        released = [c for c in self._released if not c.hits]
        self._released = []
        self._anywhere(released, wide=False)
        self._anywhere(released, wide=True)

    def _distance(self, ref: Token, t: Token, *, lone: bool = True) -> int | None:
        """Edited characters between the claim's token ``ref`` and the text's ``t`` when ``t`` may be ``ref`` edited."""
        return _token_distance(ref.kind, ref.entries, ref.shape, t.kind, t.entries, t.shape, lone)

    # -- deciding
    def _decide(self, claims: list[_Claim]):
        rep = self.report
        for c in claims:
            if c.hits or c.words:
                rep.claims_matched += 1
        for c in claims:
            claim = c.trial or c.claim
            if c.prop and not c.hits and not c.quoted and not c.restated and not c.claim.near:
                continue  # a property in words: the handout need not print it (a formula it restates, or one
                # the derivation pins to a line, it must)
            if c.dropped is not None or c.prop and c.edit is not None:
                self._misprinted(c)
                continue
            r = claim.check(self.dps)
            self._note_undecided(c.claim.id, r)
            if not c.hits and not c.words:
                rep.missing.append(Missing(c.claim.id, c.claim.printed, c.claim.location, c.claim.what,
                                           lines=self._expected(c)))
                if r.status == "mismatch":
                    self._unlocated_erratum(claim, r, "not located in the text")
                continue
            rep.claims_checked += 1
            if not c.hits:
                continue
            if r.status == "ok":
                for i in c.hits:
                    t = self.toks[i]
                    if verdict_of(t) != "wrong":
                        t.attribution = Attribution("covered", c.claim)
            elif r.status == "mismatch":
                self._claim_erratum(c, claim, r)
            else:
                for i in c.hits:
                    t = self.toks[i]
                    if t.attribution is None:
                        t.attribution = Attribution("uncovered", c.claim, f"{r.status}: {r.message}" if r.message
                                                    else r.status)

        for claim in self._unprinted:
            r = claim.check(self.dps)
            rep.claims_checked += 1
            self._note_undecided(claim.id, r)
            if r.status == "mismatch":
                self._unlocated_erratum(claim, r, "a value the handout leaves to the reader (in_text=False)")

    def _note_undecided(self, claim_id: str, r):
        """A claim whose check raised an error decided nothing: list it (with its error's first line), which fails
        the audit (:meth:`AuditReport.failures`)."""
        if r.status == "error":
            self.report.undecided.append((claim_id, r.message.splitlines()[0] if r.message else "an error"))

    def _expected(self, c: _Claim) -> tuple | None:
        """Where a claim (or input) not found was expected: between the lines of the claims and inputs the
        alignment placed before and after it in its table or section (in the derivation's order; those printing
        the same could have taken its place, so they do not bound it), else its section's lines; for an input
        the text names by its symbol, from the first line that introduces its section (:meth:`_lead_in`)."""
        same = [o for o in self._group_claims.get(c.group, []) if o.hits and o.aligned and not _alike(o, c)]
        before = [self.toks[o.hits[-1]].line for o in same if o.order < c.order]
        after = [self.toks[o.hits[0]].line for o in same if o.order > c.order]
        rng = c.rng or c.sect_rng or self._between(c.section)
        if isinstance(rng, list):
            rng = (rng[0][0], rng[-1][1])
        elif isinstance(rng, _Gap):
            rng = rng.expected
        lo = max(before) if before else rng[0] if rng else None
        hi = min(after) if after else rng[1] if rng else None
        if lo is None or hi is None or lo > hi:
            lo, hi = tuple(rng) if rng else (None, None)
        if isinstance(c, _Input) and c.symbol and c.lead_in and hi is not None:
            lo = min(lo, c.lead_in[0])  # or where its section is introduced (stage 1 of Auditor._input_found)
        return (lo, hi) if hi is not None else None

    def _misprinted(self, c: _Claim):
        """A claim found with one of its numbers deleted (missing, at the lines of the rest), or a restated formula
        printed with one number other than the statement the derivation checks (wrong there)."""
        rep, ref = self.report, c.refs
        for i in c.hits:
            self.toks[i].attribution = Attribution("covered", c.claim)
        if c.dropped is not None:
            a, b = c.hits[0], c.hits[-1]  # the lines of the rest, and of the number before (after) them when the
            if c.dropped == 0 and a > 0:  # first (last) one is left out: where it stood
                a -= 1
            elif c.dropped == len(ref) - 1 and b + 1 < len(self.toks):
                b += 1
            lines = (self.toks[a].line, self.toks[b].line)
            rep.missing.append(Missing(c.claim.id, c.claim.printed, c.claim.location,
                                       f"{c.claim.what} (its number {ref[c.dropped].text} is left out)".strip(),
                                       lines=lines))
            return
        i, want = c.edit
        t = self.toks[i]
        t.attribution = Attribution("wrong", c.claim)
        k = next((k for k, (a, b) in enumerate(zip(t.entries, want.entries)) if a != b), 0)
        where = f"{entry_label(k, t.shape)}: " if len(t.entries) > 1 else ""
        rep.errata.append(Erratum(t.line, t.entries[k], want.entries[k], where + digit_fault(t.entries[k],
                                  want.entries[k]) + " (the formula the derivation checks prints it so)",
                                  c.claim.id, "", t.context))

    def _unlocated_erratum(self, claim: Claim, r, why: str):
        """A claim that does not hold and has no token in the text: an erratum all the same, without a line."""
        correct = ", ".join(map(str, r.rounded)) if r.rounded else ""
        value = ", ".join(fmt_decimal_str(v) for v in r.values[:6])
        self.report.errata.append(Erratum(None, claim.printed, correct, f"{r.message} ({why})" if r.message
                                          else why, claim.id, value, ""))

    def _claim_erratum(self, c: _Claim, claim: Claim, r):
        if c.edit is not None:  # one number edited among several: that number is wrong, as the claim prints it
            i, ref = c.edit
            t = self.toks[i]
            for h in c.hits:
                self.toks[h].attribution = Attribution("wrong" if h == i else "covered", c.claim)
            k = next((k for k, (a, b) in enumerate(zip(t.entries, ref.entries)) if a != b), 0)
            where = f"{entry_label(k, t.shape)}: " if len(t.entries) > 1 else ""
            # the value of that entry: its place among the claim's entries, when the claim's entries are its tokens'
            before = sum(len(self.toks[h].entries) for h in c.hits[:c.hits.index(i)])
            n = sum(len(self.toks[h].entries) for h in c.hits)
            value = r.values[before + k] if len(r.values) == n else r.values[0] if r.values else ""
            self.report.errata.append(Erratum(t.line, t.entries[k], ref.entries[k],
                                              where + digit_fault(t.entries[k], ref.entries[k]), c.claim.id,
                                              fmt_decimal_str(value), t.context))
            return
        t = self.toks[c.hits[0]]
        for i in c.hits:
            self.toks[i].attribution = Attribution("wrong", c.claim)
        try:
            p = claim.read()
        except SymseqError:
            p = None
        faults, printed, correct, bad = [], [], [], []
        # a number the text edits (√4 for √3, \log4 for \log3) is corrected as the derivation prints it, when the
        # claim read as the derivation prints it holds
        own = c.refs[0] if c.trial is not None and len(c.refs) == 1 and len(c.refs[0].entries) == len(r.rounded) \
            and c.claim.check(self.dps).status == "ok" else None
        for k, ok in enumerate(r.rounded):
            e = p.entries[k] if p is not None and k < len(p.entries) else None
            text = e.text if isinstance(e, PrintedNumber) else claim.printed if len(r.rounded) == 1 else str(e)
            if r.holds[k] if len(r.holds) == len(r.rounded) else isinstance(e, PrintedNumber) and r.rounded[k] == e.text:
                continue  # this entry holds (the claim's own verdict, entry by entry)
            where = f"{entry_label(k, r.shape)}: " if len(r.rounded) > 1 else ""
            right = own.entries[k] if own is not None and len(r.rounded) > 1 and not isinstance(e, PrintedNumber) \
                else str(r.rounded[k])
            faults.append(where + digit_fault(text, right) if isinstance(e, PrintedNumber)
                          else where + f"printed {text}, correct {right}")
            printed.append(text)
            correct.append(right)
            bad.append(k)
        if not faults:
            faults, printed, correct = [r.message], [claim.printed], [", ".join(map(str, r.rounded))]
        if own is not None and len(r.rounded) == 1 and own.kind in ("root", "fraction"):
            correct = [own.entries[0]]
        # a matrix printed over several lines: each wrong entry is reported at the line it is printed on
        at = [h for h in c.hits for _ in self.toks[h].entries]
        if len(at) == len(r.rounded) == len(r.values) and len({self.toks[h].line for h in c.hits}) > 1 and \
                len(faults) == len(bad):
            by_line: dict = {}
            for k, f, pr, co in zip(bad, faults, printed, correct):
                by_line.setdefault(self.toks[at[k]].line, []).append((k, f, pr, co))
            wrong = {at[k] for k in bad}
            for h in c.hits:
                self.toks[h].attribution = self.toks[h].attribution.but("wrong" if h in wrong else "covered")
            for line, rows in by_line.items():
                tok = self.toks[next(h for h in c.hits if self.toks[h].line == line)]
                self.report.errata.append(Erratum(line, ", ".join(x[2] for x in rows), ", ".join(x[3] for x in rows),
                                                  "; ".join(x[1] for x in rows), c.claim.id,
                                                  ", ".join(fmt_decimal_str(r.values[x[0]]) for x in rows),
                                                  tok.context))
            return
        value = ", ".join(fmt_decimal_str(v) for v in r.values[:6])
        self.report.errata.append(Erratum(t.line, ", ".join(printed), ", ".join(correct), "; ".join(faults),
                                          c.claim.id, value, t.context))

    def _ambiguous(self, claims: list[_Claim]):
        """Aligned claims of one number whose printed string also stands, uncovered, between their neighbours."""
        for c in claims:
            if not c.aligned or c.trial is not None or len(c.hits) != 1 or c.rng is None:
                continue
            lo, hi = self._bounds(c)
            others = [i for i in self._stream(c.rng) if lo < i < hi and i not in self.owner and self.toks[i].attribution is None
                      and self.toks[i].key == c.keys[0]]
            if others:
                self.report.ambiguous.append(Ambiguous(c.claim.id, c.claim.printed, self.toks[c.hits[0]].line,
                                                       tuple(self.toks[i].line for i in others)))

    def _finish(self):
        unchecked = [(loc, Unchecked(d.name, x.title, x.skipped or x.error.splitlines()[0]))
                     for d in self.derivations for x in d.sections
                     if (x.skipped or x.error) and (loc := self.located.get(id(x))) is not None]
        for t in self.toks:
            if t.attribution is not None:
                continue
            if t.tier:
                t.attribution = Attribution("structural", Rule(t.rule))
            else:
                t.attribution = Attribution("uncovered", next((why for loc, why in unchecked if t.line in loc), None))
        merged: dict = {}  # one erratum per wrong number: claims printed by the same text name it once
        for e in self.report.errata:
            key = (e.line, e.printed, e.correct, e.fault, e.context) if e.line is not None else id(e)
            first = merged.setdefault(key, e)
            if first is not e:
                first.also += (e.source,)
        self.report.errata = sorted(merged.values(), key=lambda e: (e.line is None, e.line or 0))


_ARRAY = ("number", "vector", "matrix")


def _differ(x, v) -> bool:
    """Whether the exact numbers ``x`` and ``v`` differ (SymPy simplifies the difference; two rationals are
    compared at once)."""
    if isinstance(x, sp.Rational) and isinstance(v, sp.Rational):
        return x != v
    return sp.simplify(x - v) != 0


def _plain_number(s: str) -> str:
    return s.replace(MINUS, "-")


def _alike(a, b) -> bool:
    """Whether two claims (or two inputs) print the same, so either could stand at the other's place."""
    if isinstance(a, _Input) or isinstance(b, _Input):
        return isinstance(a, _Input) and isinstance(b, _Input) and a.entries == b.entries
    return a.keys == b.keys


def _formula(printed: str, long: bool = False) -> bool:
    """Whether a property's statement is a short formula (``T=1``, ``r<1``, ``d_k=3``), not a sentence: no word of
    three letters or more outside LaTeX commands, and (unless ``long``) no more than twelve characters."""
    text = re.sub(r"\\[A-Za-z]+", "", printed)
    return (long or len(_raw(printed)) <= 12) and not re.search(r"[A-Za-z]{3,}", text)


def _sentence(printed: str) -> bool:
    """Whether a property's statement is a sentence of symseq's own words (three words of four letters or more
    outside LaTeX commands), not a formula of the handout."""
    return len(re.findall(r"(?<![\\A-Za-z])[A-Za-z]{4,}", printed)) >= 3


def _handout_formula(printed: str) -> bool:
    """Whether a property's statement is a formula as the handout writes it, in LaTeX or plain ASCII
    (``\\mathcal L=\\frac12(…)^2``, ``v_t = (h_{t,0}, h_{t,2}, (h_{t,3}+h_{t,4})/2)``): then even with one
    number it is found only where the text reads so, and required (deleting its ½ changes the loss). A statement
    in symseq's own notation (``∇_{W_h} ℒ = Σ_t (g_t^z)ᵀ h_{t−1}``) may be worded otherwise in the text."""
    return ("\\" in printed or printed.isascii()) and len(_raw(printed)) > 12


@functools.lru_cache(maxsize=65536)
def _token_distance(rkind: str, rents: tuple, rshape: tuple, kind: str, ents: tuple, shape: tuple,
                    lone: bool) -> int | None:
    """:meth:`Auditor._distance` of two tokens given by kind, entries and shape (asked for many pairs)."""
    if rkind == kind == "shape" and len(rents) == len(ents):
        # a shape (1×H for 2×H): its symbols as printed, its numbers a digit or two away
        if any((number_value(a) is None or number_value(b) is None) and a != b for a, b in zip(rents, ents)):
            return None
        dist = sum(_levenshtein(a, b) for a, b in zip(rents, ents))
        return dist if 0 < dist <= 2 else None
    if rkind != kind or any(number_value(e) is None for e in rents + ents):
        return None  # only numbers can be edited digits (not T×d_k, not a symbol)
    if lone and rkind == "number" and len(re.sub(r"\D", "", rents[0])) < 2:
        return None  # a one-digit number: any other digit is as close, so no edit can be told apart
    if len(rents) != len(ents) or rshape != shape and rkind == kind == "matrix":
        return None
    dist = sum(_levenshtein(a, b) for a, b in zip(rents, ents))
    if not 0 < dist <= 2:
        return None
    for a, b in zip(rents, ents):
        if rkind not in ("fraction", "root") and not _same_form(a, b):
            return None  # a fraction or root (1/3 for 1/2): the edit distance alone decides
    return dist


@functools.lru_cache(maxsize=65536)
def _same_form(a: str, b: str) -> bool:
    """Printed with the same number of decimals, and within one unit of the leading digit of ``a``."""
    da = len(a.split(".")[1]) if "." in a else 0
    db = len(b.split(".")[1]) if "." in b else 0
    if da != db:
        return False
    x, y = number_value(a), number_value(b)
    if x is None or y is None or not (x.is_Rational and y.is_Rational):
        return True  # a fraction or root: the edit distance alone decides
    if x == 0:
        return abs(y) <= sp.Integer(10) ** (-da) * 9
    from ..read import magnitude

    return abs(abs(y) - abs(x)) <= sp.Integer(10) ** magnitude(sp.Rational(abs(x)))


def fmt_decimal_str(v, digits: int = 12) -> str:
    """A claim's decimal value string rounded half up to ``digits`` significant digits (other text unchanged)."""
    s = str(v)
    n = read_number(s)
    if n is None or not n.has_point or is_scientific(n) or n.sig_digits() <= digits:
        return s
    from ..numbers import decimal_text

    return decimal_text(s, digits, fixed=(-90, 90))


def _show(v) -> str:
    if isinstance(v, sp.MatrixBase):
        return "[" + "; ".join(", ".join(str(x) for x in v.row(i)) for i in range(v.rows)) + "]"
    return str(v)


def _render_like(value, printed: str) -> str:
    """``value`` as the handout would print it in the form of ``printed`` (decimals kept), or exactly."""
    try:
        return _rendered_like(value, printed)
    except TypeError:  # an unhashable value: not kept
        return _rendered_like.__wrapped__(value, printed)


@functools.lru_cache(maxsize=8192)
def _rendered_like(value, printed: str) -> str:
    from ..verify.claims import round_like

    p = read_number(printed.replace(MINUS, "-")) if in_value_range(canonical(printed)) else None
    if p is not None and value.is_number and value.is_real:
        import mpmath

        with mpmath.workdps(60):
            x = mpmath.mpf(sp.Float(sp.N(value, 60), 60)._mpf_)
            out = round_like(x, p, None)
        if sp.Rational(out.replace(MINUS, "-")) == value:
            return out
    return str(value)


def _trial(claim: Claim, t: Token) -> Claim | None:
    """The claim ``claim`` restated with the token's printed text (to check an edited number); None for a token
    that cannot be restated (a shape's symbols, a number out of the audit's value range)."""
    if not all(in_value_range(e) for e in t.entries):
        return None  # 1e99999999 is no edit of a claim's number: never read it as one (it would be built)
    minus = MINUS if MINUS in t.text else "-"
    ents = [e.replace("-", minus) for e in t.entries]
    if t.is_scalar:
        printed = ents[0]
    elif t.kind == "vector":
        printed = "(" + ",".join(ents) + ")"
    elif t.kind == "matrix":
        r, cols = t.shape
        printed = "[" + ";".join(",".join(ents[i * cols:(i + 1) * cols]) for i in range(r)) + "]"
    elif t.kind == "shape":
        printed = "×".join(t.entries)
    else:
        return None
    refs = claim_tokens(claim.printed)
    if len(refs) == 1 and (refs[0].start, refs[0].end) != (0, len(claim.printed.strip().strip("$"))):
        return _with_token(claim, refs[0], printed)  # (w,2-w) edited to (w,-2-w)
    return claim.restated(printed)


def _with_token(claim: Claim, ref: Token, text: str) -> Claim:
    """``claim`` with its printed token ``ref`` replaced by ``text`` (the text's number in its place)."""
    base = claim.printed.strip().strip("$")
    return claim.restated(base[:ref.start] + text + base[ref.end:])


def audit(doc: Document, derivations: list, *, dps: int = 50) -> AuditReport:
    """Audit ``doc`` against the claims, inputs and reported numbers of ``derivations`` (see the module docstring)."""
    a = Auditor(doc, derivations, dps=dps)
    return a.run()
