"""The ledger: a handout's computation as named intermediates, and every pass over it.

A :class:`Ledger` is a Wengert list. Its leaves are inputs and parameters
(exact values, or symbols when none are given); its rows are
``name := expression`` over earlier names, e.g. Week 06's Table 3::

    z_0 := w_x x_0          h_0 := φ(z_0)        ...      L := ½(ŷ − y)²

Scalar rows hold SymPy expressions; matrix rows hold trees of
:mod:`symseq.ops` nodes (``Q := H W_Qᵀ``, ``A := softmax_rows(S)``). Rows are
positions throughout: a sequence of T vectors of width D is T×D.

Passes:

* :meth:`Ledger.backward` — symbolic reverse mode. It appends one adjoint row
  per name on a path to the loss (g_t^z, g_t^h, ∂L/∂W_Q), each the **sum** of
  the contributions of that name's uses, built from local partials. The
  adjoint rows are ordinary rows, so everything below applies to them too.
* :meth:`Ledger.expand` — substitute definitions back in: a closed form in
  the inputs and parameters, or in any names kept as symbols (the handouts'
  path products keep z_t and h_t).
* :meth:`Ledger.run` — evaluate the rows in order with an array kernel
  (exact here; mpmath, NumPy and torch in :mod:`symseq.backends`).

Cost is linear in the number of rows: no pass differentiates or simplifies an
unrolled expression.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
import sympy as sp
import sympy.assumptions.wrapper  # noqa: F401  (see below)
import sympy.sets.setexpr  # noqa: F401
import sympy.tensor.tensor  # noqa: F401

# SymPy imports these lazily: Add.flatten imports sympy.tensor.tensor (and with it sympy.combinatorics) the first
# time it builds a sum, about 30 ms, and the first derivative's assumption queries import the other two. That cost
# would land inside the first derivative an author asks for (tanh′ = 1 − tanh²); importing them with the ledger
# pays it once, at import (tests/test_ledger_imports.py).

from . import ops
from .arrays import EXACT, user_shape
from .collector import without_cycle_collection
from .errors import ConventionError, EvaluationError, LedgerError, PrecisionWarning, ShapeError
from .functions import partial, require_explicit_relu
from .numbers import exact, exact_matrix

_NAME = re.compile(r"^[^\s]+$")

LISTED_NAMES = 20
"""How many of its names a ledger lists when asked for a name it does not hold (then "… and N more")."""


@dataclass
class Item:
    """One named entry of a ledger: a leaf (input, parameter) or a row (forward or adjoint)."""

    name: str
    shape: tuple
    kind: str  # "input" | "parameter" | "row" | "adjoint"
    node: ops.Node | None = None
    value: Any = None  # exact value of a leaf, or None (symbolic)
    display: str | None = None  # Unicode override
    latex: str | None = None  # LaTeX override
    note: str = ""
    adjoint_of: str | None = None
    loss: str | None = None
    allows_infinity: bool = False
    on_nonfinite: Any = ""  # a hint, or a function of the evaluating kernel returning one (see Ledger.define)
    symbol: sp.Symbol | None = None
    meta: dict = field(default_factory=dict)

    @property
    def is_leaf(self) -> bool:
        return self.kind in ("input", "parameter")

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()


def split_name(name: str) -> tuple[str, str, str]:
    """Split ``"g_0^z"`` into base, subscript and superscript: ``("g", "0", "z")``.

    Braces group (``"h_{-1}"`` → ``("h", "-1", "")``, ``"H^{(0)}"`` →
    ``("H", "", "(0)")``); ``"H^(0)"`` is read as superscript ``(0)``.
    """

    def take(s: str) -> tuple[str, str]:
        if s.startswith("{"):
            depth = 0
            for i, ch in enumerate(s):
                depth += ch == "{"
                depth -= ch == "}"
                if depth == 0:
                    return s[1:i], s[i + 1 :]
            return s[1:], ""
        if s.startswith("("):
            j = s.find(")")
            if j > 0:
                return s[: j + 1], s[j + 1 :]
        m = re.match(r"[^_^]*", s)
        return m.group(0), s[m.end() :]

    m = re.match(r"[^_^]+", name)
    if not m:
        return name, "", ""
    base, rest = m.group(0), name[m.end() :]
    sub = sup = ""
    while rest:
        if rest[0] == "_":
            piece, rest = take(rest[1:])
            sub = piece if not sub else sub + "," + piece
        elif rest[0] == "^":
            piece, rest = take(rest[1:])
            sup = piece if not sup else sup + "," + piece
        else:  # pragma: no cover - regex guarantees _ or ^
            break
    return base, sub, sup


def entry_name(name: str, i: int, j: int, shape: tuple) -> str:
    """Symbol name of entry (i, j) of matrix ``name``: W_x → W_{x,00}, x_t (1×D) → x_{t,j}, H → H_{01}."""
    base, sub, sup = split_name(name)
    m, n = shape
    big = m > 9 or n > 9
    if m == 1 and n == 1:
        idx = ""
    elif m == 1:
        idx = str(j)
    elif n == 1:
        idx = str(i)
    else:
        idx = f"{i},{j}" if big else f"{i}{j}"
    parts = [p for p in (sub, idx) if p]
    out = base
    if parts:
        out += "_{" + ",".join(parts) + "}"
    if sup:
        out += "^{" + sup + "}"
    return out


class Ledger:
    """A Wengert list of named intermediates over exact inputs and parameters.

    Example (Week 8 handout, 000, §4, the queries of the tokens A, B, then one tanh step and its gradient):

    >>> import sympy as sp
    >>> L = Ledger("two-token decoder")
    >>> H = L.input("H", sp.eye(2))
    >>> W_Q = L.parameter("W_Q", sp.Matrix([[1, 0], [0, 2]]))
    >>> Q = L.define("Q", H @ W_Q)
    >>> L.value("Q")
    Matrix([
    [1, 0],
    [0, 2]])
    >>> x, w = L.input("x", sp.Rational(1, 2)), L.parameter("w", 2)
    >>> h = L.define("h", sp.tanh(w * x))
    >>> g = L.backward("h")
    >>> g.name("w"), L.value(g.name("w"))
    ('∂h/∂w', 1/2 - tanh(1)**2/2)

    Handles returned by :meth:`input`, :meth:`parameter` and :meth:`define`
    are SymPy symbols for scalars and :class:`symseq.ops.Ref` nodes for
    matrices; combine them with ``+ - * / @ .T`` (``*`` is elementwise, ``@``
    the matrix product).
    """

    def __init__(self, title: str = "", *, exact_forms: bool = True):
        self.title = title
        #: Show exact closed forms beside decimals when claims are checked. Turn off for deep ledgers
        #: (a LayerNorm of a softmax of sines), whose claims are then decided with mpmath at high precision.
        self.exact_forms = exact_forms
        self.items: dict[str, Item] = {}
        self.order: list[str] = []
        self._symbols: dict[str, sp.Symbol] = {}
        self._entry_symbols: dict[str, sp.ImmutableMatrix] = {}  # name → its entry symbols, made once

    # ------------------------------------------------------------------ building
    def _check_new(self, name: str):
        if not isinstance(name, str) or not name or not _NAME.match(name):
            raise LedgerError(f"a ledger name must be a non-empty string without spaces; got {name!r}")
        if name in self.items:
            raise LedgerError(f"{name!r} is already defined in this ledger; each name is defined once")

    @without_cycle_collection
    def _leaf(self, kind, name, value, shape, display, latex, note):
        self._check_new(name)
        if value is not None:
            if isinstance(value, (list, tuple, np.ndarray, sp.MatrixBase)):
                given = user_shape(value)  # SymPy turns an empty (0, 3) array into a (0, 0) matrix
                value = exact_matrix(value, what=name)
                vshape = given if len(given) == 2 and 0 in given else value.shape
            else:
                value = exact(value, what=name)
                vshape = ()
            _check_defined(value, name)
            if shape is not None and tuple(shape) != vshape:
                raise ShapeError(f"{name}: the value has shape {ops._fmt_shape(vshape)} but shape={tuple(shape)} was given")
            shape = vshape
        elif shape is None:
            shape = ()
        shape = tuple(shape)
        if len(shape) not in (0, 2):
            raise ShapeError(f"{name}: shapes are () for a scalar or (rows, columns); got {shape}")
        if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in shape):
            raise ShapeError(f"{name}: the numbers of rows and columns must be positive integers; got shape {shape}")
        shape = tuple(int(s) for s in shape)
        item = Item(name, shape, kind, value=value, display=display, latex=latex, note=note)
        self._register(item)
        return self.handle(name)

    def input(self, name: str, value=None, *, shape=None, display=None, latex=None, note="") -> Any:
        """Add an input (data, a fixed state such as h_{-1}): exact ``value`` or symbolic with ``shape``.

        Values are read exactly (``"0.2"`` → 1/5, ints, Fractions, SymPy);
        floats are refused. A nested list is a matrix whose rows are positions.

        Raises:
            ConventionError: a float, text that is no decimal or fraction, a division by zero (``"1/0"``) or a
                value that is no number (SymPy's nan or zoo, as ``sympy.Rational(1, 0)`` gives).
            ShapeError: a value whose shape is not ``shape``, or a shape that is not () or (rows, columns).
            LedgerError: a name this ledger already holds.
        """
        return self._leaf("input", name, value, shape, display, latex, note)

    def parameter(self, name: str, value=None, *, shape=None, display=None, latex=None, note="") -> Any:
        """Add a trainable parameter (a weight such as W_Q or w_h); as :meth:`input` otherwise."""
        return self._leaf("parameter", name, value, shape, display, latex, note)

    @without_cycle_collection
    def define(self, name: str, value, *, display=None, latex=None, note="", allows_infinity=False,
               on_nonfinite="", kind="row", **meta) -> Any:
        """Append the row ``name := value`` and return its handle.

        ``value`` is a SymPy scalar expression over this ledger's scalar names,
        or a node tree over its handles. ``allows_infinity`` marks rows that
        legitimately hold −∞ (masked scores); ``on_nonfinite`` is the hint
        given when the row evaluates to an undefined value: a string, or a
        function of the evaluating kernel that returns one (so a hint can say
        that a row is constant *after rounding* to the kernel's ``precision``,
        e.g. float64, rather than constant in the exact input).

        Raises:
            LedgerError: for a name defined twice or an expression using a
                symbol this ledger does not know.
            ConventionError: a SymPy Float in the row (not exact), or
                ``sympy.Max(x, 0)``: write ``symseq.relu(x)``, whose
                ReLU'(0) = 0 is stated (see
                :func:`symseq.functions.require_explicit_relu`).
        """
        self._check_new(name)
        node = self._as_node(value, name)
        item = Item(name, node.shape, kind, node=node, display=display, latex=latex, note=note,
                    allows_infinity=allows_infinity, on_nonfinite=on_nonfinite, meta=meta)
        self._register(item)
        return self.handle(name)

    def _as_node(self, value, name) -> ops.Node:
        node = ops.as_node(value)
        for n in ops.walk(node):
            e = n.expr if isinstance(n, ops.Scalar) else (n.value if isinstance(n, ops.Const) else None)
            if e is not None:
                exact(e, what=f"row {name}")  # refuses SymPy Floats: every number in a row is exact
            body = e if isinstance(n, ops.Scalar) else (n.body if isinstance(n, ops.Map) else None)
            if body is not None:
                require_explicit_relu(body, f"row {name}")  # Max(x, 0) is relu(x) with a stated ReLU'(0)
        for ref in ops.refs(node):
            if ref not in self.items:
                raise LedgerError(
                    f"row {name!r} uses {ref!r}, which is not defined in this ledger; "
                    f"add it first with input(), parameter() or define()"
                )
        for n in ops.walk(node):
            if isinstance(n, ops.Ref) and n.shape != self.items[n.name].shape:
                raise ShapeError(f"row {name!r}: reference to {n.name} has a stale shape")
        return node

    def _register(self, item: Item):
        if item.shape == ():
            item.symbol = sp.Symbol(item.name, real=True)
            self._symbols[item.name] = item.symbol
        self.items[item.name] = item
        self.order.append(item.name)

    # ------------------------------------------------------------------ access
    def handle(self, name: str):
        """The SymPy symbol (scalar) or :class:`~symseq.ops.Ref` (matrix) of ``name``."""
        item = self[name]
        return item.symbol if item.is_scalar else ops.Ref(name, item.shape, self)

    def __getitem__(self, name: str) -> Item:
        try:
            return self.items[name]
        except KeyError:
            raise LedgerError(self._unknown(name)) from None

    def _unknown(self, name) -> str:
        """The message for a name this ledger does not hold: the closest names (difflib), then the names it holds
        (all of them up to :data:`LISTED_NAMES`, then how many more)."""
        text = str(name)
        close = [n for n in self.order if n.lower() == text.lower()]
        if not close:  # difflib's closest names, compared without case
            lower = {}
            for n in self.order:
                lower.setdefault(n.lower(), n)
            close = [lower[n] for n in difflib.get_close_matches(text.lower(), list(lower), n=3, cutoff=0.6)]
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        if not self.order:
            return f"{name!r} is not in this ledger{hint}; the ledger is empty: add it with input(), parameter() or define()"
        shown = ", ".join(self.order[:LISTED_NAMES])
        more = f", … and {len(self.order) - LISTED_NAMES} more" if len(self.order) > LISTED_NAMES else ""
        return (f"{name!r} is not in this ledger{hint}; it holds {len(self.order)} "
                f"name{'s' if len(self.order) != 1 else ''}: {shown}{more}")

    def __contains__(self, name) -> bool:
        return name in self.items

    def __len__(self) -> int:
        return len(self.order)

    def shape(self, name: str) -> tuple:
        return self[name].shape

    def __repr__(self) -> str:
        """One line: the title, the leaves by name, the forward and adjoint row counts (every row: ``symseq show``,
        or the ledger's display in Jupyter, :mod:`symseq.present.jupyter`)."""
        leaves = [it.name for it in self.leaves]
        named = ", ".join(leaves[:6]) + (f", … ({len(leaves)} in all)" if len(leaves) > 6 else "")
        adjoint = len(self.adjoint_rows())
        rows = f"{len(self.rows) - adjoint} forward rows" + (f", {adjoint} adjoint rows" if adjoint else "")
        return f"Ledger({self.title!r}: leaves {named or 'none'}; {rows})"

    @property
    def leaves(self) -> list[Item]:
        return [self.items[n] for n in self.order if self.items[n].is_leaf]

    @property
    def rows(self) -> list[Item]:
        return [self.items[n] for n in self.order if not self.items[n].is_leaf]

    def forward_rows(self) -> list[Item]:
        return [i for i in self.rows if i.kind == "row"]

    def adjoint_rows(self) -> list[Item]:
        return [i for i in self.rows if i.kind == "adjoint"]

    def symbol(self, name: str) -> sp.Symbol:
        item = self[name]
        if not item.is_scalar:
            raise ShapeError(f"{name} is a {ops._fmt_shape(item.shape)} matrix, not a scalar")
        return item.symbol

    def entry_symbols(self, name: str) -> sp.ImmutableMatrix:
        """The symbols standing for the entries of matrix ``name`` (W_x → W_{x,00}, ...)."""
        item = self[name]
        if item.is_scalar:
            return sp.ImmutableMatrix([[item.symbol]])
        cached = self._entry_symbols.get(name)  # a name's shape never changes, and the matrix is immutable
        if cached is None:
            m, n = item.shape
            cached = self._entry_symbols[name] = sp.ImmutableMatrix(
                m, n, lambda i, j: sp.Symbol(entry_name(name, i, j, item.shape), real=True))
        return cached

    # ------------------------------------------------------------------ reverse mode
    @without_cycle_collection
    def backward(self, loss: str, *, wrt: Iterable[str] | None = None,
                 names: dict | Callable[[str], str] | None = None) -> "Gradients":
        """Symbolic reverse mode from the scalar row ``loss``; returns :class:`Gradients`.

        Each name on a path to ``loss`` gets one adjoint row ∂loss/∂name (its
        adjoint key comes from ``names``: a dict or a function of the forward
        name; default ``"∂{loss}/∂{name}"``). The adjoint of a name used in
        several rows is the sum of one contribution per use, each the
        incoming adjoint times the local partial, so a shared weight's
        gradient is a sum over its uses. ``wrt`` limits which leaves receive
        adjoint rows (rows on the path always do).

        Raises:
            ShapeError: when ``loss`` is not a scalar.
        """
        item = self[loss]
        if not item.is_scalar:
            raise ShapeError(f"backward needs a scalar loss; {loss} is {ops._fmt_shape(item.shape)}")
        namer = _namer(loss, names)
        wanted = None if wrt is None else set(wrt)
        if wanted is not None:
            for w in wanted:
                self[w]
        contribs: dict[str, list] = defaultdict(list)
        contribs[loss].append(ops.Const(1))
        grads = Gradients(self, loss)
        stop = self.order.index(loss)
        for name in reversed(self.order[: stop + 1]):
            it = self.items[name]
            if name not in contribs or it.kind == "adjoint":
                continue
            if it.is_leaf and wanted is not None and name not in wanted:
                continue
            parts = contribs.pop(name)
            if name == loss:  # ∂L/∂L = 1 needs no row
                self._propagate(it.node, ops.Const(1), ops.Scalar(it.symbol), contribs)
                continue
            key = namer(name)
            self._check_new(key)
            total = parts[0] if len(parts) == 1 else ops.add(*parts)
            if total.shape != it.shape:
                total = ops.unbroadcast(total, it.shape) if total.shape != () else ops.Broadcast(total, it.shape)
            g_item = Item(key, it.shape, "adjoint", node=total, adjoint_of=name, loss=loss,
                          meta={"uses": len(parts)})
            self._register(g_item)
            grads.map[name] = key
            if not it.is_leaf:
                G = self.handle(key)
                G = ops.Scalar(G) if it.is_scalar else G
                self._propagate(it.node, G, ops.Ref(name, it.shape, self) if not it.is_scalar else ops.Scalar(it.symbol),
                                contribs)
        return grads

    def _propagate(self, node: ops.Node, G: ops.Node, out: ops.Node, contribs):
        if ops.is_zero(G):
            return
        if isinstance(node, ops.Ref):
            contribs[node.name].append(G)
            return
        if isinstance(node, ops.Const):
            return
        if isinstance(node, ops.Scalar):
            for s, d in local_partials(node.expr):
                if s.name in self.items:
                    contribs[s.name].append(ops.mul(G, ops.as_node(d)))
            return
        for child, g in zip(node.children, node.vjp(G, out)):
            if g is not None:
                self._propagate(child, g, child, contribs)

    # ------------------------------------------------------------------ evaluation
    def needed(self, targets: Iterable[str], stop: Iterable[str] = ()) -> list[str]:
        """Names needed to evaluate ``targets``, in ledger order (not looking behind names in ``stop``)."""
        stop = set(stop)
        need = set()
        stack = list(targets)
        while stack:
            n = stack.pop()
            if n in need:
                continue
            need.add(n)
            it = self[n]
            if it.node is not None and n not in stop:
                stack.extend(ops.refs(it.node))
        return [n for n in self.order if n in need]

    def run(self, kernel, given: dict, targets: Iterable[str] | None = None, *, check: bool = True) -> dict:
        """Evaluate rows in order with ``kernel`` and return a dict from name to value.

        ``given`` maps every needed leaf, and any row to hold fixed, to a
        kernel value; rows in ``given`` are not recomputed and their own
        inputs are not needed. ``targets`` limits evaluation to what they need.

        Raises:
            LedgerError: when a needed leaf has no value.
            EvaluationError: when a row evaluates to an undefined or infinite
                value (naming the row and the entry). NumPy's floating-point warnings (an infinity minus an
                infinity, an overflow) are not shown: the row they make undefined is this error.
        """
        names = self.order if targets is None else self.needed(targets, stop=given.keys())
        missing = [n for n in names if self.items[n].is_leaf and n not in given]
        if missing:
            raise LedgerError(
                "no value for " + ", ".join(missing) + ": give every input and parameter a value "
                "(or evaluate symbolically with expand())"
            )
        env: dict = {}
        with np.errstate(all="ignore"):  # an undefined row is an EvaluationError naming it, not a NumPy warning
            for n in names:
                if n in given:
                    env[n] = given[n]
                    continue
                it = self.items[n]
                try:
                    env[n] = ops.evaluate(it.node, kernel, env)
                except ZeroDivisionError:  # mpmath divides exactly and refuses 0/0 where arrays give nan
                    hint = _hint(it, kernel)
                    raise EvaluationError(f"row {it.name} divides by zero"
                                          + (f": {hint}" if hint else "; check the inputs of this row")) from None
                if check:
                    _check_value(kernel, it, env[n])
        return env

    def leaf_values(self, kernel=EXACT) -> dict:
        """The leaves that have exact values, as ``kernel`` values (the ``given`` of :meth:`run`).

        Warns:
            PrecisionWarning: when two of these exact values are distinct but ``kernel`` holds them as one number
                (:func:`warn_indistinct`).
        """
        out = {it.name: kernel.const(it.value) for it in self.leaves if it.value is not None}
        warn_indistinct(kernel, {n: (self.items[n].value, v) for n, v in out.items()})
        return out

    def symbolic_value(self, name: str, kernel=EXACT):
        item = self[name]
        return item.symbol if item.is_scalar else kernel.const(self.entry_symbols(name))

    def expand(self, name: str, *, keep: Iterable[str] = (), values: bool = False):
        """Closed form of ``name``: definitions substituted back in.

        Leaves stay symbols (entry symbols W_{x,00} for matrices) unless
        ``values`` is true, in which case their exact values are used; names in
        ``keep`` stay symbols too (e.g. keep the forward rows z_t, h_t to get
        the handouts' path products of an adjoint). Returns a SymPy
        expression or ImmutableMatrix.
        """
        return self.closed_forms([name], keep=keep, values=values)[name]

    def closed_forms(self, names: Iterable[str], *, keep: Iterable[str] = (), values: bool = False) -> dict:
        """The closed forms of several names (as :meth:`expand` gives each), in one pass: a row they share is
        evaluated once (the forward rows behind the adjoints of several backward passes). Returns name → SymPy
        expression or ImmutableMatrix."""
        names = list(names)
        keep = set(keep) - set(names)
        given = {}
        for n in self.needed(names, stop=keep):
            it = self.items[n]
            if n in keep or (it.is_leaf and (not values or it.value is None)):
                given[n] = self.symbolic_value(n)
            elif it.is_leaf:
                given[n] = EXACT.const(it.value)
        env = self.run(EXACT, given, names, check=values)
        return {n: to_sympy(env[n]) for n in names}

    def value(self, name: str):
        """Exact value of ``name`` from the leaves' exact values (SymPy expression or ImmutableMatrix)."""
        return self.expand(name, values=True)


_PARTIALS: dict = {}
_CANON: list = []


def _canon(i: int) -> sp.Symbol:
    while len(_CANON) <= i:
        _CANON.append(sp.Symbol(f"_c{len(_CANON)}", real=True))
    return _CANON[i]


def local_partials(expr: sp.Expr) -> list[tuple[sp.Symbol, sp.Expr]]:
    """Nonzero partial derivatives of a row's expression with respect to each of its symbols.

    Rows of an unrolled recurrence repeat one shape (z_t = w_x x_t + w_h h_{t−1}
    for every t), so each shape is differentiated once, with its symbols
    replaced by canonical ones, and the result is renamed back. This keeps
    the backward pass linear in T with a small constant.
    """
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    if any(not s.is_real for s in syms):  # only ledger symbols (real) share the template cache
        return [(s, d) for s in syms if (d := partial(expr, s)) != 0]
    canon = {s: _canon(i) for i, s in enumerate(syms)}
    key = expr.xreplace(canon)
    hit = _PARTIALS.get(key)
    if hit is None:
        hit = [(i, d) for i, c in enumerate(canon.values()) if (d := partial(key, c)) != 0]
        if len(_PARTIALS) > 100_000:
            _PARTIALS.clear()
        _PARTIALS[key] = hit
    back = {c: s for s, c in canon.items()}
    # Reuse the row's own function applications (tanh(z_t), φ(z_t)) instead of rebuilding them from the
    # template: rebuilding calls their eval (tanh's costs ~0.25 ms), which SymPy's bounded cache only
    # absorbs while the rows are few, so without this the backward pass grew faster than T.
    for f in expr.atoms(sp.Function):
        back[f.xreplace(canon)] = f
    return [(syms[i], d.xreplace(back)) for i, d in hit]


class Gradients:
    """The adjoint rows of one backward pass: ``grads["W_Q"]`` is the handle of ∂loss/∂W_Q."""

    def __init__(self, ledger: Ledger, loss: str):
        self.ledger = ledger
        self.loss = loss
        self.map: dict[str, str] = {}

    def __getitem__(self, name: str):
        return self.ledger.handle(self.name(name))

    def name(self, name: str) -> str:
        try:
            return self.map[name]
        except KeyError:
            raise LedgerError(
                f"{name!r} has no adjoint: it is not on a path to {self.loss!r}"
                + ("" if name in self.ledger else " (and is not in the ledger)")
            ) from None

    def __contains__(self, name):
        return name in self.map

    def __iter__(self):
        return iter(self.map)

    def items(self):
        return self.map.items()


def _namer(loss: str, names):
    if names is None:
        return lambda n: f"∂{loss}/∂{n}"
    if callable(names):
        return names
    return lambda n: names.get(n, f"∂{loss}/∂{n}")


def _check_value(kernel, item: Item, value):
    bad = kernel.first_nonfinite(value, allow_infinity=item.allows_infinity)
    if bad is None:
        return
    where, v = bad
    at = where_text(where, item.shape)
    hint = _hint(item, kernel)
    raise EvaluationError(
        f"row {item.name} evaluates to {v}{at}"
        + (f": {hint}" if hint else "; check the inputs of this row")
    )


def where_text(where: tuple, shape: tuple) -> str:
    """Where a value of a row of ``shape`` was found undefined, for an error: " at example [5]" (the batch
    axes of a NumPy or torch value), " at entry [1, 0]" (a matrix row's entry), both, or nothing (one number)."""
    where = tuple(int(i) for i in where)
    if len(where) < 2:
        return f" at entry {list(where)}" if where else ""
    batch, entry = where[:-2], where[-2:]
    parts = ([f"example {list(batch)}"] if batch else []) + ([f"entry {list(entry)}"] if shape != () else [])
    return f" at {', '.join(parts)}" if parts else ""


def _hint(item: Item, kernel) -> str:
    """The row's hint for an undefined value, for the kernel that evaluated it."""
    return item.on_nonfinite(kernel) if callable(item.on_nonfinite) else item.on_nonfinite


def to_sympy(value):
    """A kernel value as SymPy: object arrays become ImmutableMatrix."""
    if isinstance(value, np.ndarray):
        return sp.ImmutableMatrix(value.tolist())
    return value


def _check_defined(value, name: str) -> None:
    """Refuse a leaf value that holds SymPy's nan or zoo (a quotient by zero): no backend can evaluate it, and a
    row over it would be undefined far from the input that made it so.

    Raises:
        ConventionError: naming the leaf and the undefined value.
    """
    bad = [u for u in (sp.nan, sp.zoo) if value.has(u)]
    if bad:
        raise ConventionError(f"{name}: the value holds {bad[0]}, which is no number (SymPy's result of a division "
                              f"by zero such as 1/0 or 0/0); give a finite number, or oo / -oo where an infinity "
                              f"is meant")


def warn_indistinct(kernel, leaves: dict, *, stacklevel: int = 4) -> None:
    """Warn when exact leaf values need more digits than ``kernel`` carries to be told apart.

    The rule: two entries of the leaves (of one leaf or of two) whose exact values are distinct numbers (SymPy
    decides that their difference is not zero) but whose ``kernel`` values are equal. Every result that depends on
    their difference is then lost on this backend: a softmax of 3·10⁸⁴ + 1 and 3·10⁸⁴ − 1 comes back uniform from
    NumPy and torch (float64) and from mpmath at 50 digits, where the exact softmax gives e²/(1 + e²) to the first.
    Exact values that are not numbers (symbols) are not compared; the exact backend carries every digit.

    Args:
        kernel: the backend kernel the leaves were converted for (its ``precision`` names what it carries; None:
            exact).
        leaves: name → (exact value, the kernel's value): a SymPy number or matrix, and the scalar, array or
            tensor ``kernel.const`` made of it.

    Warns:
        PrecisionWarning: naming the first such pair of entries, their difference, how many pairs there are, and
            the digits that tell them apart (the exact backend, or mpmath with ``dps`` at least that).
    """
    precision = getattr(kernel, "precision", None)
    if precision is None:
        return
    seen: dict = {}
    pairs = []
    for name, (value, converted) in leaves.items():
        matrix = isinstance(value, sp.MatrixBase)
        exacts = list(value) if matrix else [value]
        entries = _entries(converted)
        if len(entries) != len(exacts):
            continue
        for k, (e, c) in enumerate(zip(exacts, entries)):
            if not (isinstance(e, sp.Expr) and e.is_number and e.is_finite):
                continue
            where = f"{name}[{k // value.shape[1]}, {k % value.shape[1]}]" if matrix else name
            first = seen.setdefault(c, (where, e))
            if first[1] is not e and first[1] != e and (first[1] - e).is_zero is False:
                pairs.append((first, (where, e)))
    if not pairs:
        return
    import warnings

    (n1, a), (n2, b) = pairs[0]
    diff = abs(a - b)
    digits = int(sp.ceiling(sp.log(sp.Max(abs(a), abs(b)) / diff, 10).evalf(15))) + 2
    more = f" ({len(pairs)} such pairs of inputs)" if len(pairs) > 1 else ""
    warnings.warn(
        f"the {getattr(kernel, 'name', 'backend')} backend ({precision}) holds the exact inputs {n1} = {_shown(a)} "
        f"and {n2} = {_shown(b)}, which differ by {_shown(diff)}, as the same number{more}: every result that "
        f"depends on their difference is lost there (a softmax of the two comes back uniform). Telling them apart "
        f"takes about {digits} significant digits: evaluate with the exact backend, or mpmath with dps={digits} "
        f"or more", PrecisionWarning, stacklevel=stacklevel)


def _entries(converted) -> list:
    """The entries of a kernel value, row by row, as hashable numbers (floats, mpf): a scalar, a NumPy array or a
    torch tensor."""
    if hasattr(converted, "detach"):  # torch
        return converted.detach().reshape(-1).tolist()
    if isinstance(converted, np.ndarray):
        return converted.reshape(-1).tolist()
    if isinstance(converted, np.generic):
        return [converted.item()]
    return [converted]


def _shown(x) -> str:
    """An exact number as a warning shows it: as it is when short, else to 8 significant digits."""
    text = str(x)
    return text if len(text) <= 24 else f"{sp.N(x, 8)}"
