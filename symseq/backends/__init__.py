"""Evaluate a ledger: exactly (SymPy), to any precision (mpmath), or fast on arrays (NumPy, torch).

Backends are imported only when used (the compiler and the NumPy kernel, which need only NumPy and SymPy,
with this package); a missing optional one (torch) raises
:class:`~symseq.errors.BackendUnavailable` naming the extra to install.

    >>> import sympy as sp
    >>> from symseq import Ledger, evaluate
    >>> from symseq.numbers import decimal_text
    >>> L = Ledger("one tanh step")
    >>> h = L.define("h", sp.tanh(L.parameter("w", 2) * L.input("x", sp.Rational(1, 2))))
    >>> decimal_text(evaluate(L, "mpmath", dps=30)["h"], 30)     # every row, 30 digits
    '0.761594155955764888119458282605'

``evaluate(L, "torch", device="cpu")`` gives float64 tensors.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import ConventionError, LedgerError
from .compiled import compile as _compile  # NumPy and SymPy only: loaded with symseq, not in the first compile()
from .numpy_backend import NumpyKernel

BACKENDS = ("exact", "mpmath", "numpy", "torch")
COMPILED_ONLY = ("numba",)  # backends of symseq.compile only: a program, not a row-by-row kernel


def kernel(backend: str = "mpmath", *, dps: int = 50, device=None, dtype=None):
    """The array kernel of ``backend``: one of ``exact``, ``mpmath``, ``numpy``, ``torch``.

    ``dps`` is mpmath's number of decimal digits; ``device`` and ``dtype``
    apply to torch (``dtype`` also to NumPy).

    Raises:
        ConventionError: for an unknown backend name (listing the valid ones)
            or options that do not apply to it.
        BackendUnavailable: when torch, or the requested CUDA device, is missing.
    """
    if backend == "exact":
        from ..arrays import EXACT

        return EXACT
    if backend == "mpmath":
        from .mpmath_backend import MpmathKernel

        return MpmathKernel(dps)
    if backend == "numpy":
        import numpy as np

        if device not in (None, "cpu"):
            raise ConventionError(f"the numpy backend runs on the CPU only; got device={device!r} (use backend='torch')")
        return NumpyKernel(dtype or np.float64)
    if backend == "torch":
        from .torch_backend import TorchKernel

        return TorchKernel(device=device, dtype=dtype)
    if backend in COMPILED_ONLY:
        raise ConventionError(f"the {backend} backend compiles a whole program: use symseq.compile(ledger, outputs, "
                              f"backend={backend!r}); evaluate row by row with one of {', '.join(BACKENDS)}")
    raise ConventionError(f"unknown backend {backend!r}; valid backends are {', '.join(BACKENDS)} (and "
                          f"{', '.join(COMPILED_ONLY)} for symseq.compile)")


def compile(ledger, outputs, **options):
    """Compile a ledger to a straight-line program; see :func:`symseq.backends.compiled.compile`."""
    return _compile(ledger, outputs, **options)


def evaluate(ledger, backend: str = "mpmath", *, values: dict | None = None, targets: Iterable[str] | None = None,
             dps: int = 50, device=None, dtype=None, raw: bool = False) -> dict:
    """Evaluate ``ledger``'s rows in order; returns a dict from name to value.

    ``values`` overrides leaf values, each of the leaf's shape: the numpy and
    torch backends take floats, arrays and tensors (with optional leading
    batch axes); the exact backend takes exact numbers only (ints, decimal
    strings such as ``"0.1"``, :func:`symseq.exact`, Fractions, SymPy numbers)
    and refuses floats; the mpmath backend takes exact numbers and mpf, and
    takes a float at its exact binary value with a
    :class:`~symseq.errors.PrecisionWarning` (0.1 is not 1/10: pass
    ``symseq.exact("0.1")``). Leaves not overridden use their exact values.
    ``targets`` limits the work to the rows they need. Values are SymPy
    (exact), mpf or object arrays of mpf (mpmath), float64 arrays (numpy) or
    tensors (torch); scalars come back as scalars unless ``raw``.

    Raises:
        LedgerError: when a needed input or parameter has no value (names them).
        ShapeError: a value whose shape is not its leaf's (names the leaf, both shapes).
        ConventionError: a float given to the exact backend.
        EvaluationError: when a row evaluates to an undefined value (names the row).

    Warns:
        PrecisionWarning: floats given to the mpmath backend (names the leaves).
    """
    k = kernel(backend, dps=dps, device=device, dtype=dtype)
    values = dict(values or {})
    unknown = [n for n in values if n not in ledger or not ledger[n].is_leaf]
    if unknown:
        raise LedgerError(f"values given for {', '.join(map(str, unknown))}, which are not inputs or parameters of this ledger")
    given = ledger.leaf_values(k)
    for n, v in values.items():
        given[n] = k.from_user(v, ledger[n].shape, n)
    if hasattr(k, "warn_floats"):
        k.warn_floats(values, stacklevel=3)
    env = ledger.run(k, given, targets)
    if raw:
        return env
    return {n: k.to_output(v, ledger[n].shape) for n, v in env.items()}
