"""Cross-check a ledger's symbolic gradients against torch autograd (float64).

:func:`gradient_check` evaluates the ledger's forward rows with the torch
backend, asks ``torch.autograd.grad`` for the gradient of the loss with
respect to the leaves, and compares it with the ledger's own adjoint rows
evaluated by mpmath at the *same* inputs (float64 inputs are converted to
mpmath exactly). Agreement to ~1e-15 shows that the symbolic reverse-mode
rules, not only the forward formulas, are right.

Raises :class:`~symseq.errors.BackendUnavailable` when torch is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LedgerError
from ..ledger import Gradients, Ledger


@dataclass
class GradientAgreement:
    """Agreement for one leaf: max |torch − ledger| and the same relative to max |ledger|."""

    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    scale: float

    def ok(self, tol: float = 1e-12) -> bool:
        return self.max_abs <= tol * max(1.0, self.scale)


def leaf_arrays(ledger: Ledger, values: dict | None = None) -> dict:
    """float64 arrays for every leaf: ``values`` where given, else the leaf's exact value."""
    out = {}
    values = values or {}
    for it in ledger.leaves:
        if it.name in values:
            out[it.name] = np.asarray(values[it.name], dtype=np.float64)
        elif it.value is not None:
            v = it.value
            out[it.name] = (np.array([[float(v[i, j].evalf(30)) for j in range(v.cols)] for i in range(v.rows)])
                            if it.shape != () else np.asarray(float(v.evalf(30))))
        else:
            raise LedgerError(f"{it.name} has no value; pass values={{'{it.name}': ...}} to check gradients")
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
    """Compare the ledger's adjoint rows with torch autograd for the leaves ``wrt`` (default: all with adjoints)."""
    from ..backends import evaluate
    from ..backends.torch_backend import TorchKernel

    arrays = leaf_arrays(ledger, values)
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
    ours = evaluate(ledger, "mpmath", dps=dps, values=arrays, targets=[grads.name(n) for n in names])
    out = []
    for n, tg in zip(names, torch_grads):
        ref = ours[grads.name(n)]
        ref = np.array([float(x) for x in (ref.flat if hasattr(ref, "flat") else [ref])])
        got = np.zeros_like(ref) if tg is None else tg.detach().numpy().reshape(-1)
        diff = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        out.append(GradientAgreement(n, ledger.shape(n), diff, diff / scale if scale else diff, scale))
    return out
