"""torch backend: tensors on a chosen device and dtype, differentiable by torch autograd.

The same array code as the NumPy backend (trailing two axes are the ledger
shape, scalars are (1, 1), leading batch axes broadcast). Because every
operation is a torch operation, ``torch.autograd.grad`` through a ledger's
forward rows gives an independent gradient to compare with the ledger's own
adjoint rows.

``device="cuda"`` on a machine without CUDA raises
:class:`~symseq.errors.BackendUnavailable` instead of failing inside torch.
"""

from __future__ import annotations

import sympy as sp

from ..arrays import check_user_shape
from ..errors import BackendUnavailable, ConventionError, EvaluationError, import_optional
from .scalar import Library, evaluate


def import_torch():
    """Import torch or raise a clear error naming the extra to install (:func:`symseq.errors.import_optional`)."""
    return import_optional("torch", needed_by="the torch backend", label="PyTorch",
                           otherwise="the exact, mpmath and numpy backends work without it")


def resolve_device(torch, device):
    """A torch.device for ``device`` ("cpu", "cuda", "cuda:1", None = cpu), refusing CUDA where it is absent."""
    import re

    name = "cpu" if device is None else str(device)
    if name.startswith("cuda") and not re.fullmatch(r"cuda(:\d+)?", name):
        raise ConventionError(f"unknown torch device {name!r}; use 'cpu', 'cuda' or 'cuda:N'")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise BackendUnavailable(
            f"device={name!r} was requested but torch finds no CUDA device on this machine "
            f"(torch.cuda.is_available() is False); use device='cpu'"
        )
    try:
        return torch.device(name)
    except RuntimeError:
        raise ConventionError(f"unknown torch device {name!r}; use 'cpu' or 'cuda[:index]'") from None


class TorchLibrary(Library):
    name = "torch"

    def __init__(self, torch, dtype, device):
        self.t = torch
        self.dtype = dtype
        self.device = device

    def number(self, value):
        if value is sp.S.NegativeInfinity:
            v = float("-inf")
        elif value is sp.S.Infinity:
            v = float("inf")
        else:
            v = float(value.evalf(30))
        return self.t.tensor(v, dtype=self.dtype, device=self.device)

    def pow(self, b, e, e_expr):
        if e_expr == sp.S.Half:
            return self.t.sqrt(b)
        if e_expr == -sp.S.Half:
            return self.t.rsqrt(b)
        if e_expr.is_Integer:
            return b ** int(e_expr)
        return self.t.pow(b, e)

    def f_exp(self, x):
        return self.t.exp(x)

    def f_log(self, x):
        return self.t.log(x)

    def f_tanh(self, x):
        return self.t.tanh(x)

    def f_sinh(self, x):
        return self.t.sinh(x)

    def f_cosh(self, x):
        return self.t.cosh(x)

    def f_sin(self, x):
        return self.t.sin(x)

    def f_cos(self, x):
        return self.t.cos(x)

    def f_tan(self, x):
        return self.t.tan(x)

    def f_abs(self, x):
        return self.t.abs(x)

    def f_erf(self, x):
        return self.t.erf(x)

    def f_sigmoid(self, x):
        return self.t.sigmoid(x)

    def f_relu(self, x):
        return self.t.relu(x)

    def f_heaviside(self, x, h0):
        one = self.t.ones_like(x)
        return self.t.where(x > 0, one, self.t.where(x < 0, self.t.zeros_like(x), h0 * one))

    def f_max(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = self.t.maximum(out, x)
        return out

    def f_min(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = self.t.minimum(out, x)
        return out

    def f_gelu(self, x):
        return self.t.nn.functional.gelu(x)

    def f_gelu_tanh(self, x):
        return self.t.nn.functional.gelu(x, approximate="tanh")

    def f_logsumexp(self, xs):
        return self.t.logsumexp(self.t.stack(self.t.broadcast_tensors(*xs), dim=-1), dim=-1)

    def f_softmax(self, k, xs):
        return self.t.softmax(self.t.stack(self.t.broadcast_tensors(*xs), dim=-1), dim=-1)[..., k]


class TorchKernel:
    """Array kernel over torch tensors (float64 on the CPU by default)."""

    name = "torch"
    arrays = True  # a value is one tensor with any leading batch axes (ExactKernel.arrays)

    def __init__(self, device=None, dtype=None):
        t = import_torch()
        self.t = t
        self.device = resolve_device(t, device)
        if dtype is None:
            dtype = t.float64
        elif isinstance(dtype, str):
            try:
                dtype = {"float64": t.float64, "float32": t.float32, "float16": t.float16,
                         "bfloat16": t.bfloat16}[dtype]
            except KeyError:
                raise ConventionError(f"unknown dtype {dtype!r}; use float64, float32, float16 or bfloat16") from None
        self.dtype = dtype
        self.lib = TorchLibrary(t, dtype, self.device)
        self.precision = str(dtype).replace("torch.", "")

    def _tensor(self, data):
        return self.t.as_tensor(data, dtype=self.dtype, device=self.device)

    def const(self, value):
        if isinstance(value, sp.MatrixBase):
            m, n = value.shape
            rows = [[float("-inf") if value[i, j] is sp.S.NegativeInfinity else float(value[i, j].evalf(30))
                     for j in range(n)] for i in range(m)]
            return self._tensor(rows)
        return self.lib.number(value).reshape(1, 1)

    def from_user(self, value, shape, name="value"):
        """User data for the leaf ``name`` of ``shape`` (with any leading batch axes) as a tensor of ``dtype``.

        Raises:
            ShapeError: when the trailing axes are not ``shape`` (names the leaf and both shapes).
        """
        check_user_shape(value, shape, name, "torch", batch=True)
        if isinstance(value, self.t.Tensor):
            arr = value.to(dtype=self.dtype, device=self.device)
        else:
            import numpy as np

            arr = self._tensor(np.asarray(value, dtype=float))
        return arr[..., None, None] if shape == () else arr

    def scalar(self, expr, env):
        v = evaluate(expr, self.lib, env)
        v = v if isinstance(v, self.t.Tensor) else self._tensor(v)
        return v if v.dim() >= 2 else v.reshape(1, 1)

    def apply(self, lam, a):
        (x,) = lam.variables
        v = evaluate(lam.expr, self.lib, {}, {x: a})
        return v if isinstance(v, self.t.Tensor) and v.shape == a.shape else v * self.t.ones_like(a)

    def add(self, a, b):
        return a + b

    def mul(self, a, b):
        return a * b

    def div(self, a, b):
        return a / b

    def neg(self, a):
        return -a

    def transpose(self, a):
        return a.transpose(-1, -2)

    def matmul(self, a, b):
        if b.dim() == 2 and a.dim() > 2:  # batch of row blocks times one matrix: a single matrix product
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[-1])
        return a @ b

    def sum(self, a, axis):
        if axis is None:
            return a.sum(dim=(-2, -1), keepdim=True)
        return a.sum(dim=-2 if axis == 0 else -1, keepdim=True)

    def mean(self, a, axis, count):
        """Σ/n over ``axis``; where the entries are all equal, exactly their value (0.1 + 0.1 + 0.1 ≠ 0.3 in float64).

        There the mean is computed shifted by the first entry held constant, s + Σ (a_j − s)/n, so autograd
        still gives ∂mean/∂a_j = 1/n.
        """
        s = (a[..., :1, :1] if axis is None else (a[..., :1, :] if axis == 0 else a[..., :, :1])).detach()
        same = a == s
        equal = (same.all(dim=-1, keepdim=True).all(dim=-2, keepdim=True) if axis is None
                 else same.all(dim=-2 if axis == 0 else -1, keepdim=True))
        shifted = s + self.sum(a - s, axis) / count
        return self.t.where(equal, shifted, self.sum(a, axis) / count)

    def broadcast_to(self, a, shape):
        return a.expand(*(tuple(a.shape[:-2]) + tuple(shape)))

    def entry(self, a, i, j):
        return a[..., i : i + 1, j : j + 1]

    def select(self, a, rows, cols):
        r = self.t.as_tensor(list(rows), device=self.device)
        c = self.t.as_tensor(list(cols), device=self.device)
        return a.index_select(-2, r).index_select(-1, c)

    def place(self, a, rows, cols, shape):
        out = self.t.zeros(tuple(a.shape[:-2]) + tuple(shape), dtype=self.dtype, device=self.device)
        full = self.t.zeros(tuple(a.shape[:-2]) + (len(rows), shape[1]), dtype=self.dtype, device=self.device)
        full = full.index_copy(-1, self.t.as_tensor(list(cols), device=self.device), a)
        return out.index_add(-2, self.t.as_tensor(list(rows), device=self.device), full)

    def concat(self, vals, axis):
        lead = self.t.broadcast_shapes(*[v.shape[:-2] for v in vals])
        vals = [v.expand(*(tuple(lead) + tuple(v.shape[-2:]))) for v in vals]
        return self.t.cat(vals, dim=-1 if axis == 1 else -2)

    def take_rows(self, a, ids):
        return a.index_select(-2, self.t.as_tensor(list(ids), device=self.device))

    def take_along(self, a, cols):
        idx = self.t.as_tensor(list(cols), device=self.device).reshape(-1, 1)
        idx = idx.expand(*(tuple(a.shape[:-2]) + (a.shape[-2], 1)))
        return a.gather(-1, idx)

    def place_along(self, a, cols, shape):
        out = self.t.zeros(tuple(a.shape[:-2]) + tuple(shape), dtype=self.dtype, device=self.device)
        idx = self.t.as_tensor(list(cols), device=self.device).reshape(-1, 1)
        idx = idx.expand(*(tuple(a.shape[:-2]) + (shape[0], 1)))
        return out.scatter(-1, idx, a)

    def batch_sum(self, a):
        return a.sum(dim=tuple(range(a.dim() - 2))) if a.dim() > 2 else a

    def batch_tn(self, a, b):
        """Σ over batch axes of a_bᵀ b_b as one matrix product."""
        if a.dim() == 2 and b.dim() == 2:
            return a.T @ b
        lead = self.t.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = a.expand(*(tuple(lead) + tuple(a.shape[-2:]))).reshape(-1, a.shape[-1])
        b = b.expand(*(tuple(lead) + tuple(b.shape[-2:]))).reshape(-1, b.shape[-1])
        return a.T @ b

    def softmax_rows(self, a, allowed):
        if allowed is not None:
            mask = self.t.as_tensor(allowed, device=self.device)
            a = a.masked_fill(~mask, float("-inf"))
            m = a.amax(dim=-1, keepdim=True)
            m = self.t.where(self.t.isinf(m), self.t.zeros_like(m), m).detach()
            e = self.t.exp(a - m)
            s = e.sum(dim=-1, keepdim=True)
            return e / self.t.where(s > 0, s, self.t.ones_like(s))
        return self.t.softmax(a, dim=-1)

    def logsumexp_rows(self, a):
        out = self.t.logsumexp(a, dim=-1, keepdim=True)
        if self.t.isneginf(out).any():
            raise EvaluationError("logsumexp of a row whose entries are all masked (-inf)")
        return out

    def cross_entropy_rows(self, logits, cols, lse, target):
        """ℓ_t = log Σ_j e^{s_tj}, s_tj = Z_tj − Z_{t,c_t} (torch.logsumexp shifts by the row maximum)."""
        return self.t.logsumexp(logits - self.take_along(logits, cols), dim=-1, keepdim=True)

    def first_nonfinite(self, value, allow_infinity=False):
        bad = self.t.isnan(value) if allow_infinity else ~self.t.isfinite(value)
        if not bool(bad.any()):
            return None
        idx = tuple(int(i) for i in bad.nonzero()[0])
        return idx, float(value[idx])

    def to_output(self, value, shape):
        return value[..., 0, 0] if shape == () else value
