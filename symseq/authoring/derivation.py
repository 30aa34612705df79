"""Derivations: one per handout, made of sections that build ledgers and state claims.

A derivation module (in ``derivations/`` of this project, or in an author's
own ``derivations/`` folder) reads like its handout::

    from symseq import Derivation

    derivation = Derivation("week08-decoder", title="Week 8 — One Head ...",
                            source="000_30e9e4099f2cd2dc.txt")

    @derivation.section("§4 The forward pass by hand")
    def forward_pass(s):
        L = s.ledger("two-token context AB")
        ...
        s.claim("0.330238", A[1, 0], what="w, weight on position 1")

Sections run lazily, once, when a derivation is first checked or shown. A
section that fails to build is reported as an error against that section,
without stopping the others.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import mpmath
import sympy as sp

from .. import ops
from ..derive.symbolic import identity_proof
from ..errors import ClaimError, SymseqError, install_hint
from ..ledger import Ledger
from ..numbers import exact as exact_number, short, to_mpf
from ..values import Values
from ..verify.claims import Claim, Location
from .displays import GradientPathsSpec, HeatmapSpec, PairedRowsSpec, TableSpec

if TYPE_CHECKING:  # the annotations' name; the page is read only when a section asks for it
    from .page import PageView


_FROM_PAGE = object()  # claim(value) without a printed string: the page's printing is read


@dataclass
class Reported:
    """Numbers a handout prints that no derivation can reproduce, such as results of trained models.

    ``where`` is a table or figure label ("Table 34"), or words of the
    handout's text that contain the numbers (then ``paragraph`` extends the
    declaration to the whole paragraph). ``symseq audit`` counts these
    numbers apart, with ``reason``.
    """

    where: str
    reason: str
    location: Location
    paragraph: bool = False


@dataclass
class Given:
    """An input the handout prints (a number, vector, matrix or table) and the value the derivation computes with.

    ``symseq audit`` finds the printed input in the handout (in the table
    ``at`` names, else in the section) and reports any entry that differs from
    ``value``, so a handout and its derivation cannot drift apart unnoticed.
    Inputs are not claims: ``symseq verify`` does not count them.
    """

    value: Any
    what: str
    location: Location
    at: str = ""
    seq: int = 0  # its place among the claims and inputs of its section, in the order they were stated
    near: str = ""  # text of the line the handout prints it on, when order and name cannot place it


@dataclass
class Section:
    """A section of a handout: its ledgers, notes, claims, and the tables and figures it shows."""

    derivation: "Derivation"
    title: str
    ledgers: list = field(default_factory=list)
    claims: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    error: str = ""
    skipped: str = ""
    objects: dict = field(default_factory=dict)
    displays: list = field(default_factory=list)  # TableSpec, HeatmapSpec, PairedRowsSpec in handout order
    reported_numbers: list = field(default_factory=list)  # Reported, for symseq audit
    inputs: list = field(default_factory=list)  # Given, for symseq audit
    figures: list = field(default_factory=list)  # GradientPathsSpec: figures drawn only by symseq figure
    _page: object = field(default=None, repr=False)  # the PageView this section reads, once asked for
    error_at: tuple | None = None  # (file, line) of the author's code that raised the error, when it did not build
    _place: str = field(default="", repr=False)  # the default at= of a `with s.place(...)` block
    page_names: dict = field(default_factory=dict, repr=False)  # id(ledger) -> {the page's name: the ledger's row}
    page_sizes: dict = field(default_factory=dict, repr=False)  # id(ledger) -> {a size's symbol (d_k): its value}

    def __repr__(self) -> str:
        """One line: title, derivation and counts (its ledgers, claims and displays in full: Jupyter's display)."""
        n = lambda k, what: f"{k} {what}" + ("" if k == 1 else "s")  # noqa: E731
        state = (f"; failed to build: {self.error.splitlines()[0]}" if self.error
                 else f"; not checked: {self.skipped}" if self.skipped else "")
        return (f"Section({self.title!r} of {self.derivation.name}: {n(len(self.ledgers), 'ledger')}, "
                f"{n(len(self.claims), 'claim')}, {n(len(self.displays) + len(self.figures), 'display')}{state})")

    # -- building
    def ledger(self, title: str = "", *, exact_forms: bool = True) -> Ledger:
        """A new ledger registered with this section (shown by ``symseq show``); see :class:`Ledger`."""
        return self.use(Ledger(title or self.title, exact_forms=exact_forms))

    def use(self, *ledgers: Ledger, names: dict | None = None, sizes: dict | None = None) -> Ledger:
        """Register ledgers built elsewhere (by a helper or a block) with this section, so that ``symseq show``,
        LaTeX and claims stated over their scalar names find them, and ``symseq audit`` binds the section's formulas
        to their rows; returns the first.

        Args:
            ledgers: the ledgers.
            names: ``{the page's name: the ledger's row}`` for rows the ledger names otherwise than the page,
                ``{"Q": "Q^{[1]}", "S": "S^{[1]}"}``: in this section the page's ``\\mathbf q_6``, ``q_{6,0}`` and
                ``S_{60}`` are row 6 and entry (6, 0) of ``Q^{[1]}`` and entry (6, 0) of ``S^{[1]}``
                (:mod:`symseq.audit.bound`). Applies to every ledger given.
            sizes: the value of each size the page writes with a symbol, ``{"T": 7, "D": 5, "d_k": 3}``: in this
                section the page's ``E_{\\mathrm{vocab}}\\in\\mathbb R^{K\\times D}`` is checked against the row's
                shape, and ``\\sqrt{d_k}`` in a formula is √3.

        Raises:
            ClaimError: for an object that is not a :class:`~symseq.ledger.Ledger`, a name of ``names`` that is
                no row of each ledger given, or a size that is not a positive integer.
        """
        for L in ledgers:
            if not isinstance(L, Ledger):
                raise ClaimError(f"{self.title}: use() registers ledgers; got a {type(L).__name__}")
            if not any(L is M for M in self.ledgers):
                self.ledgers.append(L)
            if names:
                lacking = [row for row in names.values() if row not in L]
                if lacking:
                    raise ClaimError(f"{self.title}: use(names=…) binds the page's names to rows of the ledger "
                                     f"{L.title!r}, which has no row {', '.join(map(repr, lacking))}; name one of "
                                     f"its rows ({', '.join(L.order[:8])}{' …' if len(L.order) > 8 else ''})")
                self.page_names.setdefault(id(L), {}).update(names)
            if sizes:
                bad = {k: v for k, v in sizes.items() if not isinstance(v, int) or isinstance(v, bool) or v < 1}
                if bad:
                    raise ClaimError(f"{self.title}: use(sizes=…) gives each size symbol a positive integer; got "
                                     f"{bad}")
                self.page_sizes.setdefault(id(L), {}).update(sizes)
        return ledgers[0] if ledgers else None

    def detach(self) -> "Section":
        """Keep this section's title, notes, error and claims with their results (:meth:`Claim.detach`), and drop
        its ledgers, displays, inputs and kept objects, in place; returns the section.

        What a worker process of :func:`symseq.verify.report.verify` (``symseq verify -j N``) sends back; the
        derivation that receives it takes it with :meth:`Derivation.adopt`.
        """
        for c in self.claims:
            c.detach()
        self.derivation = None
        self.ledgers, self.objects, self.displays, self.figures = [], {}, [], []
        self.inputs, self.reported_numbers, self._page, self.page_names, self.page_sizes = [], [], None, {}, {}
        return self

    def detached(self, copies: dict | None = None) -> "Section":
        """A copy of this section as :meth:`detach` leaves it (claims with their results and records, no ledgers,
        displays, inputs or kept objects); this section keeps everything. ``copies``, when given, receives
        ``{id(claim): its detached copy}`` for each claim, so that what names the claims (their causes) can name
        the copies.

        What ``symseq verify`` keeps in its cache of decided pages (:mod:`symseq.cache`).
        """
        dup = copy.copy(self)
        dup.claims = [copy.copy(c) for c in self.claims]
        if copies is not None:
            copies.update({id(c): d for c, d in zip(self.claims, dup.claims)})
        return dup.detach()

    def note(self, text: str):
        """Record what the handout leaves out or how a convention was read."""
        self.notes.append(text)

    def keep(self, **objects):
        """Keep named objects (blocks, gradients) for later sections, tests and presentation."""
        self.objects.update(objects)

    @property
    def page(self) -> "PageView":
        """The lines of the derivation's page this section reads (:class:`~symseq.authoring.page.PageView`): from
        its heading to the next, or the whole page when no heading names it. Read when first asked for.

        Raises:
            ClaimError: when the page is not found (:func:`~symseq.authoring.page.find_page` says where it looked).
        """
        if self._page is None:
            from .page import PageView, section_lines

            doc = self.derivation.page
            span = section_lines(doc, [t for t, _, _ in self.derivation._builders], self.title)
            first, last = span if span is not None else (1, doc.n)
            self._page = PageView(doc, first, last, f"{self.title!r} of {self.derivation.source}")
        return self._page

    def _location(self, at: str = "", **labels) -> Location:
        return Location.of(self.title, at or self._place, **labels)

    @contextlib.contextmanager
    def place(self, at: str):
        """A block of statements made at one place of the section: ``at`` is the default ``at=`` of every claim,
        input, proof and identity stated inside it (an explicit ``at=`` still wins)::

            with s.place("Table 3, backward column"):
                s.identity("g_2^h = e w_o", ...)
                s.identity("g_2^z = g_2^h φ′(z_2)", ...)

        is the same as giving ``at="Table 3, backward column"`` to each call. Blocks nest; the outer place is back
        after the block, also when it raises.

        Raises:
            ClaimError: for a place that is not a non-empty string.
        """
        if not isinstance(at, str) or not at.strip():
            raise ClaimError(f"{self.title}: place() takes the place as the section names it (a non-empty string, "
                             f"such as 'Table 3, backward column'); got {at!r}")
        outer, self._place = self._place, at
        try:
            yield self
        finally:
            self._place = outer

    @property
    def values(self):
        """The :class:`~symseq.values.Values` service of this section's derivation."""
        return self.derivation.values

    def _show(self, spec):
        spec.values = self.values
        self.displays.append(spec)
        return spec

    def _add(self, claim: Claim) -> Claim:
        claim.values = self.values
        claim.derivation = self.derivation.name
        claim.source = self.derivation.source
        claim.seq = len(self.claims) + len(self.inputs)
        claim.written = _written_at()
        self.claims.append(claim)
        return claim

    def claim(self, printed: str | Any, value: Any = _FROM_PAGE, *, what: str = "", at: str = "",
              digits: int | None = None, exact: bool | None = None, names: dict | None = None,
              ledger: Ledger | None = None, closed_form: bool = True, in_text: bool = True, near: str = "",
              name: str = "", index: int = -1) -> Claim | list[Claim]:
        """State that the handout prints ``printed`` for ``value``; or, given the value alone, that what the page
        prints for it holds.

        ``s.claim(h_t)`` reads the printed text from the page (:attr:`page`): the final result of the statement
        ``h_t = … = v`` in this section (the name is the node's ledger name, or ``name=`` as the page prints it;
        ``index=`` picks another value of the chain, ``0`` the first), or with ``near=`` the ``index``-th value
        printed on the line holding those words. ``s.claim(A, at="Table 16")`` claims every cell of the page's
        table (:meth:`table`) and returns the list of claims.

        Args:
            printed: the string as the handout prints it: ``"0.792412"``,
                ``"(0,4)"``, ``"[0.8,0.4]"``, ``"1/(1+e^{1/√2})"``, a LaTeX array,
                or an array as NumPy or PyTorch print it (``"array([[0.1, 0.2], [0.3, 0.4]])"``,
                ``"[[0.1 0.2]\n [0.3 0.4]]"``, ``"tensor([0.2500, 1.0000], grad_fn=<AddBackward0>)"``;
                see :func:`symseq.read.printed.read_array`), each entry to its printed digits.
            value: a node over a ledger (``A[1, 0]``, ``H_prime[1, :]``), a
                SymPy expression over one ledger's scalar names (pass
                ``ledger``), or an exact SymPy number or matrix; a Python int (a size, a count) is an Integer.
            what: a short description ("p(B|AB)").
            at: the place within the section ("Table 13, row 0: a"); by default the place of the enclosing
                :meth:`place` block, if any.
            digits: significant digits of a table that rounds that way; None
                means half a unit of the last printed digit.
            exact: force an exact (True) or rounded (False) comparison.
            names: values of the symbols a printed formula uses, e.g. {"w": w}.
            closed_form: show the exact closed form beside the value (when short).
            in_text: False for a value the handout leaves to the reader (an
                exercise's answer): ``printed`` is then the derivation's own
                answer, and ``symseq audit`` does not look for it in the text
                (any other claim whose number is not in the text fails the audit).
            near: text of the line the handout prints the value on (``r"W_o\\in"``),
                for ``symseq audit``: the claim is looked for on the lines that
                hold it, in its section when any there do, else anywhere in the
                file. Use it when the text prints a value outside the section
                that derives it, or where order alone cannot place it.
            name, index: where the page prints the value, when ``printed`` is not given (see above).

        Raises:
            ClaimError: a printed value that is not a string; given the value alone, a place the page does not
                print a value at (the error says what the page holds there).
        """
        if value is _FROM_PAGE:
            printed, value = None, printed
        at = at or self._place
        if printed is None:
            if at.startswith("Table ") and self.derivation.page.table(at) is not None:
                return self.table(at, None, value, digits=digits, exact=exact, what=what)
            name = name or ("" if near else getattr(value, "name", ""))
            if not name and not near:
                raise ClaimError(f"{self.title}: claim() without a printed string reads it from the page: give the "
                                 f"page's name of the value (name='h_t') or words of its line (near='Step 5')")
            printed = self.page.printed(name, near=near, index=index)
        return self._value_claim(printed, value, self._location(at), what=what, digits=digits, exact=exact,
                                 names=names, ledger=ledger, closed_form=closed_form, in_text=in_text, near=near)

    def _value_claim(self, printed, value, location: Location, *, names=None, ledger=None, **kw) -> Claim:
        _check_printed(printed)
        value = _integer(value)
        if isinstance(value, sp.Basic) and not isinstance(value, sp.MatrixBase) and value.free_symbols and ledger is None:
            ledger = self._ledger_for(value)
        return self._add(Claim(printed, "value", value, location=location, names=dict(names or {}), ledger=ledger,
                               **kw))

    def claim_rows(self, rows, matrix, *, what: str | tuple | list = "", at: str | tuple | list = "",
                   start: int = 0, **options) -> list[Claim]:
        """State a table the handout prints one vector per row: ``rows[k]`` is row ``start + k`` of ``matrix``.

        ``s.claim_rows(["[0.1, 1.3]", None, "[0.9, 1.1]"], H, what="E + P")`` is ``s.claim("[0.1, 1.3]", H[0, :],
        what="E + P, row 0")`` and the same for row 2: one claim per printed row, in order.

        Args:
            rows: the printed vectors, in the handout's order; None for a row the handout does not print.
            matrix: an m×n node (or exact matrix) with at least ``start + len(rows)`` rows.
            what, at: one description or place for all rows (``", row t"`` is added: each row is a place of its
                own, so two rows that print the same vector are two claims of two printings), or a tuple or list
                of one per entry of ``rows``.
            start: the row of ``matrix`` that ``rows[0]`` prints.
            options: as for :meth:`claim` (``digits``, ``exact``, ``near``, ...), for every row.

        Raises:
            ClaimError: a ``matrix`` without rows for all of ``rows``, or a ``what``/``at`` list of another
                length than ``rows``; nothing is claimed then.
        """
        rows = list(rows)
        at = at or self._place
        whats = self._per_item(what, rows, "what", lambda t, w: f"{w}, row {t}" if w else f"row {t}", start)
        ats = self._per_item(at, rows, "at", lambda t, a: f"{a}, row {t}" if a else "", start)
        m = getattr(matrix, "shape", (0,))[0] if getattr(matrix, "shape", ()) != () else 0
        if start < 0 or start + len(rows) > m:
            raise ClaimError(f"{self.title}: claim_rows() of {len(rows)} printed row(s) from row {start} needs a "
                             f"matrix with {start + len(rows)} rows at least; it has {m}")
        return [self.claim(p, matrix[start + k, :], what=w, at=a, **options)
                for k, (p, w, a) in enumerate(zip(rows, whats, ats)) if p is not None]

    def claim_cells(self, cells, matrix, *, what: str = "", **options) -> list[Claim]:
        """State a matrix the handout prints as bare cells, one claim per cell, row by row.

        For the layouts whose rows are not a vector the audit reads as one value: a LaTeX ``bmatrix`` of bare
        cells (``a & b \\\\ c & d``) or a tensor printed in scientific notation. ``cells`` is a string of the
        cells as printed, separated by white space (``"-0.0845 0.0557 ..."``), or a list of them; claim ``k``
        is entry (k // n, k % n) of the m×n ``matrix``, described as ``what[i,j]``.

        Args:
            cells: the m·n printed cells, row by row.
            matrix: an m×n node or exact matrix.
            what: a description; ``[i,j]`` is added.
            options: as for :meth:`claim`, for every cell.

        Raises:
            ClaimError: a ``matrix`` that is not m×n, or a number of cells other than m·n; nothing is claimed
                then.
        """
        cells = cells.split() if isinstance(cells, str) else list(cells)
        shape = getattr(matrix, "shape", ())
        if len(shape) != 2 or shape[0] * shape[1] != len(cells):
            got = "×".join(map(str, shape)) if len(shape) == 2 else "a scalar"
            raise ClaimError(f"{self.title}: claim_cells({what!r}) has {len(cells)} printed cell(s) for a matrix "
                             f"of shape {got}; give one cell per entry, row by row")
        n = shape[1]
        return [self.claim(p, matrix[k // n, k % n], what=f"{what}[{k // n},{k % n}]", **options)
                for k, p in enumerate(cells)]

    def claim_line(self, near: str, *items, first: int = 0, at: str = "", **options) -> list[Claim]:
        """State the values the page prints on one line, in the order the line prints them.

        ``s.claim_line(r"\\mathbf o_6^{[1]}\\approx", (O1[6, :], "o_6^[1]"), (O2[6, :], "o_6^[2]"))`` claims the
        first value printed on the section's line holding those words for ``O1[6, :]`` and the second for
        ``O2[6, :]``: item k is ``(value, what)`` and takes the ``first + k``-th number, list or matrix of the line
        (:meth:`~symseq.authoring.page.PageView.printed` with ``near``). The text is claimed as printed, except
        that LaTeX spacing commands (``\\,`` ``\\;`` ``\\:`` ``\\!``) and the blanks around them are dropped:
        ``(1.06,\\;0.789)`` is claimed as ``(1.06,0.789)``.

        Args:
            near: words of the line, as the page prints them (the first line of the section holding them).
            items: ``(value, what)`` pairs, ``value`` as for :meth:`claim`.
            first: the index on the line of the value of the first item (0: the line's first value).
            at, options: as for :meth:`claim` (``digits``, ``exact``, ...), for every item.

        Returns the claims, in order.

        Raises:
            ClaimError: an item that is not a (value, what) pair, or a line that prints fewer values (the error
                says what the line holds); nothing is claimed then.
        """
        if not all(isinstance(it, tuple) and len(it) == 2 and isinstance(it[1], str) for it in items):
            raise ClaimError(f"{self.title}: claim_line({near!r}, ...) takes (value, what) pairs, one per value of "
                             f"the line; got {items!r}")
        texts = [_quoted(self.page.printed(near=near, index=first + k)) for k in range(len(items))]
        return [self.claim(text, value, what=what, at=at, **options) for text, (value, what) in zip(texts, items)]

    def _per_item(self, given, items: list, arg: str, single: Callable, start: int) -> list[str]:
        """One string per item: ``single(t, given)`` for a string ``given``, else ``given`` itself (checked)."""
        if isinstance(given, str):
            return [single(start + k, given) for k in range(len(items))]
        out = list(given)
        if len(out) != len(items) or not all(isinstance(x, str) for x in out):
            raise ClaimError(f"{self.title}: {arg}= takes one string, or one string per printed row "
                             f"({len(items)}); got {given!r}")
        return out

    def claim_shape(self, printed: str, shape, *, dims: dict | None = None, what: str = "", at: str = "",
                    near: str = "") -> Claim:
        """State the printed shape of an object, in the form the page prints it.

        Args:
            printed: ``"4×3"``, ``"4 x 3"``, ``"4 \\times 3"``, ``"T×d_k"`` (with ``dims={"T": 4, "d_k": 3}``),
                or as NumPy and PyTorch print a shape: ``"(4, 3)"``, ``"[4, 3]"``, ``"torch.Size([4, 3])"``
                (the forms of :data:`symseq.read.printed.SHAPE_FORMS`).
            shape: a tuple, a node, or a ledger name's handle (its shape, rows × columns).
            dims: the sizes of the names ``printed`` uses.
            what, at, near: as for :meth:`claim`.

        The claim holds when the printed sizes are the object's, in order. A one-dimensional printed shape
        (``torch.Size([4])``) does not match a 1×4 row: the mismatch says so.

        Raises:
            ClaimError: for a ``printed`` that is not a string. A form not listed above is the claim's error
                when it is checked, with the accepted forms.
        """
        _check_printed(printed)
        if isinstance(shape, ops.Node):
            shape = shape.shape
        return self._add(Claim(printed, "shape", tuple(shape), location=self._location(at), what=what,
                               names={k: sp.Integer(v) for k, v in (dims or {}).items()}, near=near))

    def prove(self, statement: str, check: Callable[[], Any], *, what: str = "", at: str = "",
              near: str = "") -> Claim:
        """A property the handout states, decided by ``check()`` → bool or (bool, detail).

        Use it for statements proved on the ledger ("every masked row sums to
        1"), with the proof in code. See also :meth:`identity`, :meth:`agree`
        and :meth:`differ`.

        ``near`` is the handout's own words on the line that states it (as for
        :meth:`claim`). Give it for a statement in words ("gives a different
        result", "is unchanged"): ``symseq audit`` then fails when the text no
        longer says it, and ``symseq verify`` fails when the numbers say
        otherwise. A statement with numbers must have them on that line.
        """
        return self._add(Claim(statement, "property", check, location=self._location(at), what=what, near=near))

    def step(self, statement: str, *, result: Any = None, operands: dict | None = None, what: str = "",
             at: str = "", near: str = "") -> Claim:
        """A computation the page prints, decided as the page computed it: from its own printed operands.

        ``s.step("2.0 · 0.4621 = 0.9242")`` holds when 2.0 × 0.4621, computed exactly from the printed
        numbers, rounds to 0.9242 at its printed precision (the rule of every claim); a chain
        ``a = b ≈ c`` is decided link by link (:mod:`symseq.verify.steps`). With ``result``, the printed
        result must also be its true value: give ``result=`` rather than a separate :meth:`claim` of the same
        printed number (the audit attributes each printed number to one claim). The statement is read by
        :mod:`symseq.read.syntax`'s grammar (numbers, + − × · / ^ √, ``\\frac``, exp, log, tanh, σ,
        softmax, printed lists), never run as code.

        Args:
            statement: the step as printed.
            result: the quantity its printed result stands for (a ledger node or a scalar's symbol): the printed
                result is checked against its true value, and a wrong one is classified (root, propagated or
                rounding drift, :mod:`symseq.verify.causes`).
            operands: printed operand text → quantity (``{"0.4621": h_0}``): a wrong operand makes a wrong result
                propagated from it.
            what, at, near: as for :meth:`prove`.

        Raises:
            ClaimError: a statement that cannot be read, that does not end in a printed number, or operands
                that are not among its printed numbers.
        """
        from ..verify.steps import Step

        check = Step(statement, result=result, operands=dict(operands or {}))
        if result is not None:
            check.truths["result"] = self._truth(check.printed_result, result)
        for text, node in check.operands.items():
            check.truths[text] = self._truth(text, node)
        return self.prove(statement, check, what=what or "step", at=at, near=near)

    def _truth(self, printed: str, value) -> Claim:
        """A claim of a printed number of a step against its true value (not listed among the section's claims)."""
        ledger = None
        if isinstance(value, sp.Basic) and not isinstance(value, sp.MatrixBase) and value.free_symbols:
            ledger = self._ledger_for(value)
        claim = Claim(printed, "value", value, location=self._location(), ledger=ledger)
        claim.values = self.values
        return claim

    def identity(self, statement: str, *differences, what: str = "", at: str = "", near: str = "") -> Claim:
        """A property proved by reducing each of ``differences`` to zero: left − right ≡ 0, entry by entry.

        Args:
            statement: the identity as the handout states it.
            differences: SymPy expressions or matrices (left − right), or ``(left, right)`` pairs and
                ``sp.Eq(left, right)`` (then a false identity shows the two sides' values).
            what, at, near: as for :meth:`prove`.

        Decided by :func:`symseq.derive.symbolic.identity_proof`: a name that stands for two SymPy symbols (a
        plain ``sp.Symbol("y_1")`` beside the ledger's real ``y_1``) fails at once, with the fix
        (``L.symbol("y_1")``); each entry is evaluated at 30 digits at a few exact random points inside its
        domain, and a nonzero value fails the identity with that point and the values; an entry zero at
        every point is then simplified to 0 by SymPy within a bounded time (30 s).
        """
        pairs = [tuple(d.args) if isinstance(d, sp.Equality) else d for d in differences]
        sided = any(isinstance(d, tuple) for d in pairs)
        for d in pairs:
            if isinstance(d, tuple) and len(d) != 2:
                raise ClaimError(f"{self.title}: identity() takes differences (left − right) or (left, right) "
                                 f"pairs; got a tuple of {len(d)}")
        diffs = [_difference(*d) if isinstance(d, tuple) else d for d in pairs]
        sides = [d if isinstance(d, tuple) else (d, sp.S.Zero) for d in pairs] if sided else None
        owners = {L.items[n].symbol: f"the ledger {L.title!r}'s {n}" for L in self.ledgers for n in L.order
                  if L.items[n].symbol is not None}

        def check():
            return identity_proof(diffs, sides=sides, owners=owners).check()

        return self.prove(statement, check, what=what, at=at, near=near)

    def identities(self, *items, at: str = "", near: str = "") -> list[Claim]:
        """Several identities stated at one place: ``s.identities(("ŷ = w_o h_2", d1), ("g_2^h = e w_o", d2),
        at="Table 3")`` is :meth:`identity` once per item, in order.

        Args:
            items: tuples ``(statement, difference, ...)``, each as the arguments of :meth:`identity`.
            at, near: as for :meth:`identity`, for every item.

        Returns the claims, in order.

        Raises:
            ClaimError: an item that is not a tuple of a statement (a string) and at least one difference; nothing
                is stated then.
        """
        bad = [it for it in items if not (isinstance(it, tuple) and len(it) >= 2 and isinstance(it[0], str))]
        if bad:
            raise ClaimError(f"{self.title}: identities() takes (statement, difference, ...) tuples; got {bad[0]!r}")
        return [self.identity(statement, *differences, at=at, near=near) for statement, *differences in items]

    def agree(self, statement: str, a, b, *, tol=None, what: str = "", at: str = "", near: str = "") -> Claim:
        """A property: ``a`` and ``b`` have the same value, entry by entry, within ``tol`` (10⁻⁴⁰ by default).

        Both are decided at the derivation's working precision (50 digits) by
        its :class:`~symseq.values.Values`. Use it for a quantity the handout
        computes two ways (``S √d_k`` and ``Q Kᵀ``; the column sums of the
        weighted values and the output row).

        Args:
            a, b: nodes over ledgers (the two may belong to different ledgers),
                SymPy expressions over one ledger's scalar names, or exact
                numbers and matrices, of the same shape; or two lists of them,
                compared pair by pair.
            tol: the largest difference allowed: an exact number or a decimal string ("1e-45").

        Returns the claim; its detail gives the largest difference, or the
        shapes when they differ. ``what``, ``at`` and ``near`` as for :meth:`prove`.
        """
        return self.prove(statement, lambda: _compare(self, a, b, tol=tol), what=what, at=at, near=near)

    def differ(self, statement: str, a, b, *, by, what: str = "", at: str = "", near: str = "") -> Claim:
        """A property: ``a`` and ``b`` differ, some entry by more than ``by`` (the handout says "changes",
        "is not the same"); arguments as for :meth:`agree`. Given two lists, every pair must differ."""
        return self.prove(statement, lambda: _compare(self, a, b, by=by), what=what, at=at, near=near)

    def table(self, label: str, printed: list | None, value, *, rows: list | None = None,
              cols: list | None = None, digits: int | None = None, exact: bool | None = None,
              what: str = "") -> list[Claim]:
        """One claim per printed entry of a table (rows are positions), located by row and column label.

        ``printed`` is a list of rows of printed strings, or None to read them from the page's table ``label``
        (:meth:`~symseq.authoring.page.PageView.table`): of each data row, its last n cells for an m×n ``value``,
        the cells before them joined as the row's label (when ``rows`` is not given). ``value`` is a matrix node
        of the same shape (or larger: the table shows its leading rows). The table is also recorded for
        presentation (``symseq show``, LaTeX).

        Raises:
            ClaimError: reading from the page, when it has no such table, or a row with fewer cells than ``value``
                has columns.
        """
        if printed is None:
            n = value.shape[1] if len(getattr(value, "shape", ())) == 2 else 1
            cells = self.page.table(label)
            short = [k for k, c in enumerate(cells) if len(c) < n]
            if short:
                raise ClaimError(f"{self.title}: {label} of the page has rows with fewer than {n} cells "
                                 f"(data rows {short}); the claimed value has {n} columns")
            printed = [c[len(c) - n:] for c in cells]
            if rows is None:
                rows = [" ".join(c[:len(c) - n]) or str(k) for k, c in enumerate(cells)]
        self._show(TableSpec(label, value, printed, rows, cols, digits))
        out = []
        for i, row in enumerate(printed):
            for j, text in enumerate(row):
                if text is None:
                    continue
                r = rows[i] if rows else str(i)
                c = cols[j] if cols else str(j)
                where = self._location(f"{label}, row {r}, {c}", row=r, column=c)
                out.append(self._value_claim(text, value[i, j], where, what=what, digits=digits, exact=exact))
        return out

    def show_table(self, label: str, value, *, rows: list | None = None, cols: list | None = None,
                   digits: int | None = 3) -> TableSpec:
        """Record a matrix to present as a table (no claims); see :meth:`table` for a checked one."""
        return self._show(TableSpec(label, value, None, rows, cols, digits))

    def heatmap(self, label: str, value, *, rows: list | None = None, cols: list | None = None, allowed=None,
                digits: int = 3, title: str = "") -> HeatmapSpec:
        """Record a heatmap the handout draws (scores or attention weights; ``allowed`` marks unmasked entries).

        ``allowed`` is None, ``"causal"``, a boolean keep-matrix (True = unmasked) or a :class:`~symseq.ops.Mask`,
        checked as the attention blocks check a mask (rows may be empty).

        Raises:
            ShapeError, MaskError: as :func:`symseq.ops.allowed_matrix`.
        """
        shape = getattr(value, "shape", None)
        allowed = ops.allowed_matrix(allowed, shape if isinstance(shape, tuple) and len(shape) == 2 else None,
                                     empty_rows="zero", what=f"{self.title}: heatmap {label}")
        return self._show(HeatmapSpec(label, value, rows, cols, allowed, digits, title))

    def gradient_paths(self, label: str, **params) -> GradientPathsSpec:
        """Record a gradient-path figure (Week 06, Figure 3), drawn by ``symseq figure NAME gradient-paths``.

        ``params`` are those of :func:`symseq.derive.paths.gradient_path_curves`:
        ``w_h``, ``w_x``, ``h_init``, ``inputs``, ``factors``, ``length``.

        Raises:
            ClaimError: for a parameter it does not take.
        """
        from ..derive.paths import GRADIENT_PATH_KEYS

        unknown = sorted(set(params) - set(GRADIENT_PATH_KEYS))
        if unknown:
            raise ClaimError(f"{self.title}: gradient_paths() does not take {', '.join(unknown)}; "
                             f"its parameters are {', '.join(GRADIENT_PATH_KEYS)}")
        spec = GradientPathsSpec(label, dict(params))
        self.figures.append(spec)
        return spec

    def reported(self, where: str, *more: str, reason: str, paragraph: bool = False) -> Reported | list[Reported]:
        """Declare numbers of the handout that no derivation can reproduce, with the reason.

        Args:
            where: a table or figure label ("Table 34"), or words of the text
                that contain the numbers ("1,943/2,023/1,915").
            more: further labels or words with the same reason, each declared as if by its own call, in order
                (``s.reported("0.001", "15.7", "0.0001", reason="illustrative gradient sizes")``).
            reason: why they cannot be derived ("held-out accuracy of trained
                recipes: stored results of the tutorial's runs").
            paragraph: declare every number of the paragraph containing ``where`` (and each of ``more``).

        Returns:
            the :class:`Reported` of ``where``; given ``more``, the list of one per label, in order.

        Raises:
            ClaimError: for an empty ``where`` (or one of ``more``), or an empty ``reason``; nothing is declared then.
        """
        wheres = (where, *more)
        for w in wheres:
            if not isinstance(w, str) or not w.strip() or not isinstance(reason, str) or not reason.strip():
                raise ClaimError(f"{self.title}: reported(where, ..., reason=...) needs the table labels or the words "
                                 f"of the text that hold the numbers, and the reason they cannot be derived; got "
                                 f"where={w!r}, reason={reason!r}")
        out = [Reported(w.strip(), reason.strip(), self._location(), paragraph) for w in wheres]
        self.reported_numbers.extend(out)
        return out if more else out[0]

    def given(self, value: Any, *more: Any, what: str | tuple | list = "", at: str = "", near: str = "",
              ledger: Ledger | None = None, index: int = 0):
        """Record an input the handout prints, with the exact value the derivation computes with.

        Given a name as the page prints it (``s.given("W_z")``), the input is read from the page: the first value
        of the statement ``W_z = …`` in this section (``index=`` another; ``near=`` words of its line), recorded
        as an input, and its exact value returned (a Rational, or an ImmutableMatrix: a flat list is one row)
        for the ledger to compute with: ``L.parameter("W_z", s.given("W_z"))``. Several names return a list.

        Args:
            value: a ledger input or parameter: a matrix node (``L["W_1"]``,
                ``W_Q.T``) or a scalar leaf's symbol (``x = L.input("x", exact("0.7"))``,
                then ``s.given(x)``), a SymPy expression over one ledger's scalar
                names, or an exact SymPy number or matrix; a Python int (a size) is an Integer.
            more: further inputs the page prints after ``value``, in the order it prints them, with the same
                ``what``, ``at``, ``near`` and ``ledger``: ``s.given(X[0, :], X[1, :], X[2, :], what="rows of X")``
                is three calls, one per printed row (each printed occurrence is its own input).
            what: what the input is ("W_Q^T as printed", "d_k"); with ``more``, one description for all, or a
                tuple or list of one per input (``what=("x", "h")``).
            at: the table that prints it ("Table 8"), if any; its rows are
                compared with the rows of ``value`` in order.
            near: text of the line that prints it (``"target = X.new_tensor("``),
                when neither the section's order nor a name before ``=`` places it;
                the input is looked for on that line only.
            ledger: the ledger whose scalar names ``value`` uses, when more than
                one ledger of this section defines them (as for :meth:`claim`).

        A scalar value is evaluated at once, on its ledger, to the exact number
        ``symseq audit`` compares with the text.

        Returns:
            the :class:`Given` of ``value``; given ``more``, the list of one per input, in order. Given names,
            the exact values read from the page (a list for several names).

        Raises:
            ClaimError: a scalar expression over names that no ledger of this
                section defines, or over a leaf declared without a value; a ``what`` list whose length is not the
                number of inputs, or whose items are not strings (nothing is recorded then).
        """
        if isinstance(value, str):
            names = (value, *more)
            if not all(isinstance(m, str) for m in names):
                raise ClaimError(f"{self.title}: given() takes names printed on the page or values, not both; got "
                                 f"{names!r}")
            from .page import exact_value, printed_parts

            read, givens, whats = [], [], []
            for k, m in enumerate(names):
                text = self.page.printed(m, near=near, index=index)
                read.append(exact_value(text, self.page.where))
                w = what[k] if isinstance(what, (tuple, list)) else what or m
                parts = printed_parts(text)  # as the audit reads the page: a nested list is one vector per row
                givens += parts if len(parts) > 1 else [read[-1]]
                whats += [w] * (len(parts) if len(parts) > 1 else 1)
            self.given(*givens, what=whats, at=at, near=near, ledger=ledger)
            return read if more else read[0]
        n, at = 1 + len(more), at or self._place
        value, more = _integer(value), tuple(_integer(m) for m in more)
        whats = list(what) if isinstance(what, (tuple, list)) else [what] * n
        if len(whats) != n or not all(isinstance(w, str) for w in whats):
            raise ClaimError(f"{self.title}: given() of {n} input(s) takes one description (what='...') or one per "
                             f"input, as strings; got what={what!r}")
        values = [self._scalar_value(v, ledger, f"given({v}{', what=' + repr(w) if w else ''})")
                  if isinstance(v, sp.Basic) and not isinstance(v, sp.MatrixBase) and v.free_symbols else v
                  for v, w in zip((value, *more), whats)]
        out = []
        for v, w in zip(values, whats):
            out.append(Given(v, w, self._location(at), at, seq=len(self.claims) + len(self.inputs), near=near))
            self.inputs.append(out[-1])
        return out if more else out[0]

    def paired_rows(self, label: str, ledger: Ledger, pairs: list) -> PairedRowsSpec:
        """Record forward rows beside backward rows in the handout's order, e.g. [("z_0", "∂L/∂h_{-1}"), ...]."""
        for f, b in pairs:
            for n in (f, b):
                if n is not None:
                    ledger[n]
        return self._show(PairedRowsSpec(label, ledger, list(pairs)))

    def _scalar_value(self, expr, ledger: Ledger | None, call: str):
        """The exact value of a scalar expression over a ledger's scalar names (for :meth:`given`).

        Raises:
            ClaimError: naming ``call`` when no ledger defines the names, or a leaf has no value.
        """
        L = ledger if ledger is not None else self._ledger_for(expr)
        try:
            return self.values.exact(ops.Scalar(expr), ledger=L)
        except SymseqError as exc:
            raise ClaimError(f"{self.title}: {call}: the input's value cannot be computed exactly ({exc}); give the "
                             f"leaf its printed value, e.g. L.input('x', exact('0.7'))") from None

    def _ledger_for(self, expr) -> Ledger:
        names = {s.name for s in expr.free_symbols}
        hits = [L for L in self.ledgers if names <= set(L.items)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise ClaimError(
                f"{self.title}: the value uses {sorted(names)}, which no ledger of this section defines; create "
                f"the ledger with s.ledger() (or register one a helper built with s.use(L)), or pass the ledger "
                f"as ledger=... (claim and given take it)"
            )
        return hits[-1]


def _written_at() -> tuple[str, int] | None:
    """(file, 1-based line) of the innermost caller outside symseq's own code: the line of a derivation module (or
    of an author's helper) that states a claim, through however many of symseq's own calls (``s.table``)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not _symseq_code(name):
            return name, frame.f_lineno
        frame = frame.f_back
    return None


_PACKAGE = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def _symseq_code(filename: str) -> bool:
    """Whether ``filename`` is a module of the symseq package itself (its bundled derivations are not)."""
    if filename.startswith("<"):  # <string>, <frozen ...>: not an author's file either
        return True
    path = Path(filename).resolve()
    return path.is_relative_to(_PACKAGE) and not path.is_relative_to((_PACKAGE / "derivations").resolve())


def _difference(left, right):
    """left − right for two SymPy expressions or two matrices of one shape."""
    if isinstance(left, sp.MatrixBase) != isinstance(right, sp.MatrixBase) or (
            isinstance(left, sp.MatrixBase) and left.shape != right.shape):
        raise ClaimError(f"identity(): the two sides of a pair must be two expressions or two matrices of one shape; "
                         f"got {getattr(left, 'shape', 'a scalar')} and {getattr(right, 'shape', 'a scalar')}")
    return left - right


def _quoted(text: str) -> str:
    """A printed value as a claim quotes it: without LaTeX spacing commands (``\\,`` ``\\;`` ``\\:`` ``\\!``) and the
    blanks around them (``(1.06,\\;0.789)`` → ``(1.06,0.789)``); any other text unchanged."""
    return re.sub(r"\s*\\[,;:!]\s*", "", text)


def _integer(value):
    """A Python int as a SymPy Integer (a size or a count the page prints); any other value unchanged."""
    return sp.Integer(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _check_printed(printed):
    if not isinstance(printed, str):
        raise ClaimError(
            f"a claim's printed value must be the string the handout prints, e.g. '0.330238'; got the "
            f"{type(printed).__name__} {printed!r} (a number would lose how many digits were printed)"
        )


class Derivation:
    """A handout's derivation (see the module docstring).

    Args:
        name: short identifier used on the command line (``week08-decoder``).
        title: the handout's title.
        source: the handout file name (e.g. ``000_30e9e4099f2cd2dc.txt``).
        description: one line for ``symseq list``.
    """

    def __init__(self, name: str, *, title: str, source: str, description: str = ""):
        self.name = name
        self.title = title
        self.source = source
        self.description = description
        self._builders: list[tuple[str, Callable, tuple]] = []
        self._sections: list[Section] | None = None
        self.module = None
        self.values = Values()  # every value of its sections' claims and displays is computed here
        self._page_path: Path | None = None

    def use_page(self, path: str | Path) -> None:
        """Read the page from ``path`` instead of finding ``source`` on the search path (``symseq audit FILE``
        reads FILE); takes effect for sections not built yet.

        Raises:
            ClaimError: when ``path`` is not a file.
        """
        if not Path(path).is_file():
            raise ClaimError(f"{self.name}: the page {path} is not a file")
        self._page_path = Path(path)

    @property
    def page_path(self) -> Path:
        """The file of this derivation's page: the one :meth:`use_page` named, else ``source`` found on the
        search path of :func:`~symseq.authoring.page.find_page`.

        Raises:
            ClaimError: when it is not found, naming the folders looked in.
        """
        from .page import find_page

        if self._page_path is None:
            self._page_path = find_page(self.source, getattr(self.module, "__file__", None))
        return self._page_path

    @property
    def page(self):
        """The derivation's page, as :func:`symseq.read.document.read` reads it (read once per content)."""
        from .page import read_page

        return read_page(self.page_path)

    @property
    def whole_page(self) -> "PageView":
        """All the lines of the derivation's page (:class:`~symseq.authoring.page.PageView`), for what a section
        reads outside its own lines: inputs printed once and used by every section's ledger.

        Raises:
            ClaimError: when the page is not found (as :attr:`page_path`).
        """
        from .page import PageView

        doc = self.page
        return PageView(doc, 1, doc.n, self.source)

    def per_page(self, build: Callable[[], Any]) -> Callable[[], Any]:
        """A decorator: ``build()`` runs once per page this derivation reads and its result is kept, for what several
        sections share (the page's parameters, a ledger built from them)::

            @derivation.per_page
            def parameters() -> dict:
                return {"W_Q": derivation.whole_page.value("W_Q")}

        After :meth:`use_page` names another page (``symseq audit FILE`` reads FILE), the next call builds again
        from that page; the result for the first page is kept too.
        """
        cached = functools.cache(lambda page: build())
        return functools.wraps(build)(lambda: cached(self.page_path))

    def section(self, title: str, *, requires: Iterable[str] = ()):
        """Decorator registering a section builder ``f(section)``; ``requires`` names optional packages (torch)."""

        def deco(fn):
            self._builders.append((title, fn, tuple(requires)))
            return fn

        return deco

    def reported(self, title: str, where: str, *more: str, reason: str, paragraph: bool = False) -> None:
        """A section that holds only numbers no derivation can reproduce: the same as a section whose builder
        calls ``s.reported(where, *more, reason=reason, paragraph=paragraph)`` (see :meth:`Section.reported`)."""
        self.section(title)(lambda s: s.reported(where, *more, reason=reason, paragraph=paragraph))

    @property
    def sections(self) -> list[Section]:
        if self._sections is None:
            self._sections = [self._build(title, fn, req) for title, fn, req in self._builders]
        return self._sections

    def _build(self, title, fn, requires) -> Section:
        s = Section(self, title)
        for pkg in requires:
            if importlib.util.find_spec(pkg) is None:
                s.skipped = f"needs {pkg}, which is not installed ({install_hint(pkg)})"
                return s
        from .discovery import interrupts_noted, section_error

        with interrupts_noted() as interrupts:
            try:
                fn(s)
            except (Exception, SystemExit, KeyboardInterrupt) as exc:
                # sys.exit(0) or a KeyboardInterrupt raised by a section is that section's error, never the end of a
                # run with claims left to decide; a real Ctrl-C still stops the run
                if isinstance(exc, KeyboardInterrupt) and interrupts.real:
                    raise
                s.error, s.error_at = section_error(exc, fn)  # the author's file and line first, then the trace
        return s

    @property
    def claims(self) -> list[Claim]:
        return [c for s in self.sections for c in s.claims]

    def reloader(self) -> Callable[[], "Derivation"] | None:
        """A picklable call that loads this derivation afresh in another process (``symseq verify -j N``): a
        bundled one by its module's name, an author's by its module's file; None for a derivation not defined in a
        module (made in a notebook or a test), which only this process can build."""
        from .discovery import load

        m = self.module
        if m is None:
            return None
        if m.__name__.startswith("symseq.derivations."):
            return functools.partial(load, m.__name__, None, self.name)
        return functools.partial(load, None, m.__file__, self.name) if getattr(m, "__file__", None) else None

    def adopt(self, sections: list[Section]) -> None:
        """Take ``sections`` built and decided in another process, or in an earlier run (:meth:`Section.detach`),
        as this derivation's sections: their claims keep their results and records, without ledgers or displays,
        until :meth:`forget` drops them."""
        for s in sections:
            s.derivation = self
        self._sections = list(sections)
        self._adopted = True

    def forget(self) -> None:
        """Drop sections taken with :meth:`adopt`, so that the next use builds them here, in full (what loading a
        derivation again does: :func:`~symseq.authoring.discovery.load`); sections built here are kept."""
        if getattr(self, "_adopted", False):
            self._sections = None
            self._adopted = False

    def __repr__(self):
        return f"Derivation({self.name!r}, source={self.source!r}, sections={len(self._builders)})"


def _compare(section: Section, a, b, *, tol=None, by=None) -> tuple[bool, str]:
    """(holds, detail) for :meth:`Section.agree` (``by`` None) or :meth:`Section.differ`."""
    if isinstance(a, list) != isinstance(b, list) or (isinstance(a, list) and len(a) != len(b)):
        raise ClaimError("agree() and differ() compare two values, or two lists of values of the same length")
    pairs = list(zip(a, b)) if isinstance(a, list) else [(a, b)]
    values = section.values

    def numeric(x):  # a SymPy expression over a ledger's scalar names is evaluated on that ledger
        if isinstance(x, sp.Basic) and not isinstance(x, sp.MatrixBase) and x.free_symbols:
            return values.numeric(ops.Scalar(x), ledger=section._ledger_for(x))
        return values.numeric(x)

    gaps = []  # the largest difference of each pair
    for x, y in pairs:
        vx, sx = numeric(x)
        vy, sy = numeric(y)
        if sx != sy:
            return False, f"shapes {sx} and {sy} differ"
        gaps.append(max((abs(p - q) for p, q in zip(vx, vy)), default=mpmath.mpf(0)))
    if by is None:
        limit = mpmath.mpf(10) ** -40 if tol is None else to_mpf(exact_number(tol), values.dps)
        return bool(max(gaps) < limit), f"largest difference {short(max(gaps), 3)}"
    detail = "largest difference " + (short(gaps[0], 3) if len(gaps) == 1 else
                                      "; ".join(f"{short(g, 3)} (pair {i})" for i, g in enumerate(gaps)))
    return bool(min(gaps) > to_mpf(exact_number(by), values.dps)), detail

