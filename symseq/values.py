"""Values: the one place where the rows of ledgers are evaluated for checking and display.

A :class:`Values` service evaluates nodes over ledgers exactly (SymPy
numbers, :data:`symseq.arrays.EXACT`) or with mpmath at ``dps`` decimal
digits, and keeps what it computed, keyed by ledger and precision, so that
the many claims, tables and figures of one derivation evaluate each row once
per precision. It is owned by its caller: a :class:`~symseq.Derivation` owns
one for all its sections, and anything evaluated without an owner gets a
service of its own. Nothing is kept for the life of the process.

Example (Week 8, §4: the weight on position 0 of the second row, at 30 digits and exactly):

>>> import sympy as sp
>>> from symseq import Ledger, ops
>>> L = Ledger()
>>> A = L.define("A", ops.SoftmaxRows(L.input("S", [[0, 1 / sp.sqrt(2)]])))
>>> from symseq.numbers import decimal_text
>>> v = Values()
>>> nums, shape = v.numeric(A[0, 0], dps=30)
>>> decimal_text(nums[0], 30), shape
('0.330238450673343074383205054166', ())
>>> v.exact(A[0, 0])
1/(1 + exp(sqrt(2)/2))

Evaluation itself (a node's tree over kernel values) is :func:`symseq.ops.evaluate`;
the order of rows is :meth:`symseq.ledger.Ledger.run`.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable

import mpmath
import sympy as sp

from .errors import ClaimError, LedgerError, SymseqError
from .numbers import exact as _exact_number, exact_matrix, to_mpf

# The ledger's modules and NumPy are imported where a node (or an array) reaches the service: the page's own
# arithmetic (symseq audit with no derivation) decides claims of plain numbers without loading them.

DPS = 50  # default working precision, decimal digits
EXACT_SIZE_LIMIT = 400  # expression nodes of an exact row beyond which exact forms are not worth keeping


def is_node(value) -> bool:
    """Whether ``value`` is a ledger node (:class:`symseq.ops.Node`); asked without importing :mod:`symseq.ops`,
    since no value is a node before that module is loaded."""
    ops = sys.modules.get("symseq.ops")
    return ops is not None and isinstance(value, ops.Node)


def _is_array(value) -> bool:
    """Whether ``value`` is a NumPy array; asked without importing NumPy (no value is one before it is loaded)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


def ledger_of(node) -> Any:
    """The ledger a node refers to (through its :class:`~symseq.ops.Ref` leaves), or None."""
    if not is_node(node):
        return None
    from . import ops

    for n in ops.walk(node):
        if isinstance(n, ops.Ref) and n.ledger is not None:
            return n.ledger
    return None


def _unevaluated(value, ledger) -> bool:
    """Whether ``value`` needs no ledger: exact numbers, or a constant node that refers to none."""
    if not is_node(value):
        return True
    from . import ops

    return isinstance(value, ops.Const) and ledger is None and ledger_of(value) is None


class Values:
    """Exact and mpmath values of ledger nodes, computed once per ledger and precision.

    Args:
        dps: the default working precision in decimal digits (50).
    """

    def __init__(self, dps: int = DPS):
        self.dps = int(dps)
        self._envs: dict = {}  # (id(ledger), "exact" | dps) -> (ledger, kernel, env); the ledger is kept alive
        self._exact_rows: dict = {}  # id(ledger) -> (ledger, {name: exact value of bounded size})

    # -- environments
    def _env(self, ledger, node, dps):
        """(kernel, env) with every row ``node`` needs evaluated; ``dps=None`` means exactly, ``"float32"`` or
        ``"float64"`` with the NumPy backend in that precision."""
        from . import ops

        key = (id(ledger), "exact" if dps is None else dps if isinstance(dps, str) else int(dps))
        if key not in self._envs:
            if dps is None:
                from .arrays import EXACT

                k = EXACT
            elif isinstance(dps, str):
                import numpy as np

                from .backends.numpy_backend import NumpyKernel

                k = NumpyKernel(np.dtype(dps))
            else:
                from .backends.mpmath_backend import MpmathKernel

                k = MpmathKernel(dps)
            self._envs[key] = (ledger, k, ledger.leaf_values(k))
        _, k, env = self._envs[key]
        missing = [n for n in ops.refs(node) if n not in env]
        if missing:
            env.update(ledger.run(k, env, missing))
        return k, env

    @staticmethod
    def _ledger(node, ledger):
        led = ledger or ledger_of(node)
        if led is None:
            raise ClaimError("a value to evaluate must refer to a ledger (a node built from ledger handles, "
                             "or a SymPy expression over a ledger's scalar names with ledger=...)")
        return led

    # -- values
    def exact(self, value, *, ledger=None):
        """The exact value (SymPy number or ImmutableMatrix) of a node over a ledger, or of exact numbers.

        ``ledger`` is needed only for a node whose names are not ledger handles
        (a :class:`~symseq.ops.Scalar` over a ledger's scalar symbols).

        Raises:
            ClaimError: for a node that refers to no ledger, or inexact numbers.
            LedgerError, EvaluationError: when the ledger cannot be evaluated.
        """
        if not is_node(value):
            return _exact_of(value)
        from . import ops
        from .ledger import to_sympy

        if _unevaluated(value, ledger):
            return to_sympy(value.value) if _is_array(value.value) else value.value
        k, env = self._env(self._ledger(value, ledger), value, None)
        return to_sympy(ops.evaluate(value, k, env))

    def numeric(self, value, dps: int | None = None, *, ledger=None) -> tuple[list, tuple]:
        """Row-major list of mpmath numbers (``mpmath.mpf``) correct to ``dps`` digits, and the shape (``()`` for a scalar).

        ``value`` is a node over a ledger, exact numbers (SymPy, ints, decimal strings, nested lists), or an
        mpmath number computed elsewhere (a path sum evaluated factor by factor), taken as it is.
        """
        dps = self.dps if dps is None else int(dps)
        with mpmath.workdps(dps):  # mpf() rounds to the current precision: keep all dps digits
            if hasattr(value, "_mpf_") and not isinstance(value, sp.Basic):
                return [mpmath.mpf(value)], ()
            if _unevaluated(value, ledger):
                val = self.exact(value)
                if isinstance(val, sp.MatrixBase):
                    return [to_mpf(e, dps) for e in val], val.shape
                return [to_mpf(val, dps)], ()
            from . import ops

            k, env = self._env(self._ledger(value, ledger), value, dps)
            v = ops.evaluate(value, k, env)
            if _is_array(v):
                return [mpmath.mpf(x) for x in v.flat], v.shape
            return [mpmath.mpf(v)], ()

    def floats(self, value, dtype: str = "float64", *, ledger=None) -> tuple[list, tuple]:
        """Row-major list of Python floats and the shape: the node computed row by row in ``dtype`` (``"float32"``
        or ``"float64"``) by the NumPy backend from the ledger's exact leaves, as a float program of the same
        computation would give it; exact numbers are rounded once to ``dtype``.

        Used to say which digit a float computation prints where a printed decimal sits near a rounding boundary.
        """
        if dtype not in ("float32", "float64"):
            raise ClaimError(f"floats() computes in float32 or float64; got {dtype!r}")
        import numpy as np

        from . import ops

        if _unevaluated(value, ledger):
            val = self.exact(value)
            entries = list(val) if isinstance(val, sp.MatrixBase) else [val]
            return [float(np.dtype(dtype).type(float(e))) for e in entries], getattr(val, "shape", ())
        k, env = self._env(self._ledger(value, ledger), value, dtype)
        v = np.asarray(ops.evaluate(value, k, env), dtype=dtype)
        shape = () if v.size == 1 and getattr(value, "shape", ()) == () else v.shape
        return [float(x) for x in v.flat], shape

    def numeric_with(self, value, held: dict, dps: int | None = None, *, ledger=None) -> list:
        """Row-major mpmath values of a node over a ledger with some entries of its upstream rows replaced.

        ``held`` maps (row name, row-major index of the entry; 0 for a scalar row) to an exact number. The held
        rows take those entries (their other entries keep their values), every row they reach is computed again
        from them, and every other row keeps its value (this service's, computed once). This is the node as a page
        computed it from the values it printed upstream (:func:`symseq.verify.causes.trace`).

        Raises:
            LedgerError: when a needed input has no value.
            EvaluationError: when a row evaluates to an undefined or infinite value (or divides by zero).
        """
        from . import ops

        dps = self.dps if dps is None else int(dps)
        value = value if isinstance(value, ops.Node) else ops.as_node(value)
        led = self._ledger(value, ledger)
        k, env = self._env(led, value, dps)
        given: dict = {}
        for (name, idx), number in held.items():
            v = given.get(name, env[name])
            if _is_array(v):
                v = v.copy() if name not in given else v
                v.flat[idx] = k.number(number)
            else:
                v = k.number(number)
            given[name] = v
        moved = set(given)
        for name in led.needed(ops.refs(value), stop=moved):
            node = led[name].node
            if name not in moved and node is not None and ops.refs(node) & moved:
                moved.add(name)  # reached by a held entry: computed again
            elif name not in moved:
                given[name] = env[name]
        with mpmath.workdps(dps):
            v = ops.evaluate(value, k, led.run(k, given, ops.refs(value)))
            return [mpmath.mpf(x) for x in v.flat] if _is_array(v) else [mpmath.mpf(v)]

    def in_entries_of(self, value, name: str, *, ledger=None):
        """The entries of a node as SymPy expressions of the entries of one row it refers to, the row held as its
        entry symbols (W_x → W_{x,00}, …; a scalar row as its symbol): a NumPy object array of the node's shape,
        or one expression for a scalar node. The node must refer to ``name`` alone.

        Raises:
            LedgerError: a node that refers to other names too (names them).
        """
        from . import ops
        from .arrays import EXACT

        value = value if isinstance(value, ops.Node) else ops.as_node(value)
        led = self._ledger(value, ledger)
        other = sorted(ops.refs(value) - {name})
        if other:
            raise LedgerError(f"in_entries_of({name!r}): the node refers to {', '.join(other)} too")
        it = led[name]
        held = it.symbol if it.is_scalar else EXACT.const(led.entry_symbols(name))
        return ops.evaluate(value, EXACT, {name: held})

    def rows(self, ledger, names: Iterable[str] | None = None, dps: int | None = None) -> dict:
        """mpmath values of several rows of ``ledger`` at once (all rows by default), by name.

        Raises:
            LedgerError: when a needed input has no value.
            EvaluationError: when a row evaluates to an undefined or infinite value.
        """
        from . import ops

        dps = self.dps if dps is None else int(dps)
        names = list(ledger.order if names is None else names)
        _, env = self._env(ledger, ops.Group([ops.Ref(n, ledger[n].shape, ledger) for n in names]), dps)
        return {n: env[n] for n in names}

    def exact_rows(self, ledger) -> dict:
        """Exact values of the rows of ``ledger`` whose exact forms stay small, by name.

        A row whose exact value exceeds :data:`EXACT_SIZE_LIMIT` expression nodes
        is left out together with every row that uses it, so the cost stays
        bounded on deep ledgers; a ledger with an input without a value gives {}.
        """
        key = id(ledger)
        if key not in self._exact_rows:
            self._exact_rows[key] = (ledger, _bounded_exact(ledger))
        return self._exact_rows[key][1]


def _exact_of(value):
    """Exact numbers as SymPy: a matrix (SymPy, nested lists, an array) or a number without free symbols."""
    if isinstance(value, (sp.MatrixBase, list, tuple)) or _is_array(value):
        return exact_matrix(value)
    if isinstance(value, sp.Basic) and value.free_symbols:
        raise ClaimError(f"the value {value} has free symbols {sorted(map(str, value.free_symbols))}; "
                         f"state it over a ledger or substitute numbers")
    return _exact_number(value)


def _bounded_exact(ledger) -> dict:
    from . import ops
    from .arrays import EXACT
    from .ledger import to_sympy

    env, out, dropped = {}, {}, set()
    for n in ledger.order:
        it = ledger[n]
        if it.is_leaf:
            if it.value is None:
                return {}
            env[n] = EXACT.const(it.value)
            out[n] = it.value
            continue
        if ops.refs(it.node) & dropped:
            dropped.add(n)
            continue
        try:
            v = to_sympy(ops.evaluate(it.node, EXACT, env))
        except SymseqError:
            dropped.add(n)
            continue
        if _size(v) > EXACT_SIZE_LIMIT:
            dropped.add(n)
            continue
        env[n] = EXACT.const(v) if isinstance(v, sp.MatrixBase) else v
        out[n] = v
    return out


def _size(v) -> int:
    """Expression nodes of an exact value, counted up to just past the limit."""
    count = 0
    for e in (list(v) if isinstance(v, sp.MatrixBase) else [v]):
        for _ in sp.preorder_traversal(e):
            count += 1
            if count > EXACT_SIZE_LIMIT:
                return count
    return count


__all__ = ["Values", "ledger_of", "is_node", "DPS", "EXACT_SIZE_LIMIT"]
