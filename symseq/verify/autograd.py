"""Cross-check a ledger's symbolic gradients against torch autograd (float64).

:func:`gradient_check` evaluates the ledger's forward rows with the torch
backend, asks ``torch.autograd.grad`` for the gradient of the loss with
respect to the leaves, and compares it with the ledger's own adjoint rows
evaluated by mpmath at the *same* inputs: each float64 input is converted to
mpmath exactly (its binary value, by an explicit rule here, since the mpmath
backend itself refuses floats). Agreement to ~1e-15 shows that the symbolic
reverse-mode rules, not only the forward formulas, are right.

Scalar leaves are 0-d values (a Python number or a 0-d array); matrix leaves
are arrays of the leaf's shape. Values given in a less precise dtype
(float32, float16, bfloat16) are upcast exactly to float64 and the check runs
in float64 at those points: it checks the ledger's gradients there, not
float32 arithmetic, so it warns (:class:`~symseq.errors.PrecisionWarning`)
and records the dtype in :attr:`GradientAgreement.given`.

Raises :class:`~symseq.errors.BackendUnavailable` when torch is missing.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import mpmath
import numpy as np

from ..errors import LedgerError, PrecisionWarning, ShapeError
from ..ledger import Gradients, Ledger


@dataclass
class GradientAgreement:
    """Agreement for one leaf: max |torch − ledger| and the same relative to max |ledger|.

    ``given`` is the dtype the leaf's values came in ("float64", or e.g. "float32" when they were upcast
    exactly to float64 for the check; "exact" for the leaf's own exact value).
    """

    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    scale: float
    given: str = "float64"

    def ok(self, tol: float = 1e-12) -> bool:
        return self.max_abs <= tol * max(1.0, self.scale)


_LOWER = {"float32", "float16", "bfloat16"}


def _dtype_name(value) -> str:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return np.asarray(value).dtype.name if not isinstance(value, float) else "float64"
    return str(dtype).replace("torch.", "")


def _as_float64(value, it) -> np.ndarray:
    """``value`` (number, nested list, array or tensor) as a float64 array of the leaf's shape."""
    if hasattr(value, "detach"):  # a torch tensor (any dtype, any device)
        import torch

        value = value.detach().to(device="cpu", dtype=torch.float64).numpy()
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != tuple(it.shape):
        want = "a scalar (a number or a 0-d array)" if it.shape == () else "×".join(map(str, it.shape))
        got = "a scalar" if arr.shape == () else "×".join(map(str, arr.shape))
        raise ShapeError(f"gradient_check: the value given for {it.name} has shape {got} but {it.name} is {want}")
    return arr


def leaf_arrays(ledger: Ledger, values: dict | None = None) -> dict:
    """float64 arrays for every leaf: ``values`` where given, else the leaf's exact value.

    Scalars are 0-d arrays, matrices arrays of the leaf's shape.

    Raises:
        ShapeError: a given value whose shape is not its leaf's.
        LedgerError: a leaf with neither a given nor an exact value.
    """
    out = {}
    values = values or {}
    for it in ledger.leaves:
        if it.name in values:
            out[it.name] = _as_float64(values[it.name], it)
        elif it.value is not None:
            v = it.value
            out[it.name] = (np.array([[float(v[i, j].evalf(30)) for j in range(v.cols)] for i in range(v.rows)])
                            if it.shape != () else np.asarray(float(v.evalf(30))))
        else:
            raise LedgerError(f"{it.name} has no value; pass values={{'{it.name}': ...}} to check gradients")
    return out


def exact_binary(arr: np.ndarray):
    """float64 values as mpmath numbers holding exactly the same binary values (0-d: one number)."""
    if arr.shape == ():
        return mpmath.mpf(float(arr))
    out = np.empty(arr.shape, dtype=object)
    for idx, x in np.ndenumerate(arr):
        out[idx] = mpmath.mpf(float(x))
    return out


def random_values(ledger: Ledger, rng: np.random.Generator, scale: float = 1.0, keep=()) -> dict:
    """Random float64 values for every leaf (normal, times ``scale``), except names in ``keep``."""
    out = {}
    for it in ledger.leaves:
        if it.name in keep:
            continue
        out[it.name] = rng.normal(size=it.shape if it.shape != () else ()) * scale
    return out


def gradient_check(ledger: Ledger, grads: Gradients, *, values: dict | None = None, wrt=None,
                   dps: int = 30) -> list[GradientAgreement]:
    """Compare the ledger's adjoint rows with torch autograd for the leaves ``wrt`` (default: all with adjoints).

    Args:
        values: leaf name → value (a number or 0-d array for a scalar leaf, an array or tensor of the
            leaf's shape otherwise); other leaves use their exact values, rounded to float64.
        dps: mpmath digits for the ledger's adjoint rows.

    Returns:
        One :class:`GradientAgreement` per leaf with an adjoint row.

    Raises:
        ShapeError: a value whose shape is not its leaf's.
        LedgerError: a leaf with no value.
        BackendUnavailable: torch is missing.

    Warns:
        PrecisionWarning: a value given in float32 (or float16, bfloat16), checked at its float64 upcast.
    """
    from ..backends import evaluate
    from ..backends.torch_backend import TorchKernel

    arrays = leaf_arrays(ledger, values)
    given_as = {n: _dtype_name(v) for n, v in (values or {}).items()}
    lower = sorted(n for n, d in given_as.items() if d in _LOWER)
    if lower:
        warnings.warn(
            f"gradient_check: {', '.join(f'{n} ({given_as[n]})' for n in lower)} given in less than float64; their "
            f"values are upcast exactly and the gradients are checked in float64 at those points, not in "
            f"{given_as[lower[0]]} arithmetic", PrecisionWarning, stacklevel=2)
    names = [n for n in (wrt or [it.name for it in ledger.leaves]) if n in grads]
    k = TorchKernel(dtype="float64")
    t = k.t
    given, tensors = {}, {}
    for it in ledger.leaves:
        x = t.tensor(arrays[it.name], dtype=t.float64, requires_grad=it.name in names)
        tensors[it.name] = x
        given[it.name] = x if it.shape != () else x.reshape(1, 1)
    env = ledger.run(k, given, [grads.loss])
    loss = env[grads.loss].reshape(())
    torch_grads = t.autograd.grad(loss, [tensors[n] for n in names], allow_unused=True)
    at_same_points = {n: exact_binary(a) for n, a in arrays.items()}
    ours = evaluate(ledger, "mpmath", dps=dps, values=at_same_points, targets=[grads.name(n) for n in names])
    out = []
    for n, tg in zip(names, torch_grads):
        ref = ours[grads.name(n)]
        ref = np.array([float(x) for x in (ref.flat if hasattr(ref, "flat") else [ref])])
        got = np.zeros_like(ref) if tg is None else tg.detach().numpy().reshape(-1)
        diff = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        out.append(GradientAgreement(n, ledger.shape(n), diff, diff / scale if scale else diff, scale,
                                     given_as.get(n, "exact")))
    return out
