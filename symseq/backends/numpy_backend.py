"""NumPy backend: float arrays, optionally with leading batch axes.

Every value is an array whose last two axes are the ledger shape; a scalar
row is stored with trailing shape (1, 1). Leading axes (a batch of inputs)
broadcast through every operation, so one evaluation covers many points.
Softmax and logsumexp subtract the row maximum; masked entries are exact
zeros in the weights.
"""

from __future__ import annotations

import reprlib

import numpy as np
import sympy as sp

from ..arrays import check_user_shape
from ..errors import ConventionError, EvaluationError
from .scalar import Library, evaluate


class NumpyLibrary(Library):
    name = "numpy"

    def __init__(self, dtype=np.float64):
        self.dtype = dtype

    def number(self, value):
        if value is sp.S.NegativeInfinity:
            return self.dtype(-np.inf)
        if value is sp.S.Infinity:
            return self.dtype(np.inf)
        return self.dtype(float(value.evalf(30)))

    def pow(self, b, e, e_expr):
        if e_expr == sp.S.Half:
            return np.sqrt(b)
        if e_expr == -sp.S.Half:
            return 1 / np.sqrt(b)
        if e_expr.is_Integer:
            return b ** int(e_expr)
        return np.power(b, e)

    f_exp = staticmethod(np.exp)
    f_tanh = staticmethod(np.tanh)
    f_sinh = staticmethod(np.sinh)
    f_cosh = staticmethod(np.cosh)
    f_sin = staticmethod(np.sin)
    f_cos = staticmethod(np.cos)
    f_tan = staticmethod(np.tan)
    f_abs = staticmethod(np.abs)

    def f_log(self, x):
        with np.errstate(divide="ignore"):
            return np.log(x)

    def f_erf(self, x):
        from math import erf

        return np.vectorize(erf, otypes=[self.dtype])(x)

    def f_sigmoid(self, x):
        x = np.asarray(x, dtype=self.dtype)
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))

    def f_relu(self, x):
        return np.maximum(x, 0)

    def f_heaviside(self, x, h0):
        return np.where(x > 0, 1.0, np.where(x < 0, 0.0, h0)).astype(self.dtype)

    def f_max(self, xs):
        return np.maximum.reduce(np.broadcast_arrays(*xs))

    def f_min(self, xs):
        return np.minimum.reduce(np.broadcast_arrays(*xs))

    def f_gelu(self, x):
        return x / 2 * (1 + self.f_erf(x / np.sqrt(2)))

    def f_gelu_tanh(self, x):
        return x / 2 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))

    def f_logsumexp(self, xs):
        s = np.stack(np.broadcast_arrays(*xs), axis=-1)
        return _lse(s, axis=-1, keepdims=False)

    def f_softmax(self, k, xs):
        s = np.stack(np.broadcast_arrays(*xs), axis=-1)
        return _softmax(s, None)[..., k]


def _lse(a, axis=-1, keepdims=True):
    m = np.max(a, axis=axis, keepdims=True)
    if np.any(np.isneginf(m)):
        raise EvaluationError("logsumexp of a row whose entries are all masked (-inf)")
    with np.errstate(under="ignore"):
        out = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax(a, allowed, overwrite=False):
    """Row softmax of a (…, m, n) with the entries outside ``allowed`` (an m×n boolean matrix, or None) at exactly 0;
    one array is made and the rest is computed in it (in ``a`` itself with ``overwrite``: a float array of the
    result's shape that nothing reads afterwards)."""
    if allowed is not None:
        excluded = ~allowed
        if overwrite:
            np.copyto(a, -np.inf, where=excluded)
        else:
            a = np.where(allowed, a, -np.inf)
            overwrite = True
    m = np.max(a, axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)  # rows with no allowed entry (empty_rows="zero")
    with np.errstate(under="ignore"):
        e = np.subtract(a, m, out=a) if overwrite else a - m
        if allowed is None:
            np.exp(e, out=e)
        else:  # e^{−∞} = 0 where excluded, set rather than computed: NumPy's exp takes a slow path for −∞
            np.exp(e, out=e, where=allowed)
            np.copyto(e, 0.0, where=excluded)
    s = np.sum(e, axis=-1, keepdims=True)
    e /= np.where(s > 0, s, 1.0)
    return e


def _run_or_list(idx: tuple):
    """A tuple of indices as a slice when they are consecutive and increasing (basic indexing: a view), else a
    list (advanced indexing: a copy)."""
    if idx == tuple(range(idx[0], idx[0] + len(idx))):
        return slice(idx[0], idx[0] + len(idx))
    return list(idx)


class NumpyKernel:
    """Array kernel over NumPy (float64 by default); see the module docstring for shapes."""

    name = "numpy"
    arrays = True  # a value is one array with any leading batch axes (ExactKernel.arrays)
    folds_rows = True  # a compiled program may run a batch of rows as one matrix (CompiledLedger._fold_rows)

    def __init__(self, dtype=np.float64, backend="numpy"):
        self.dtype = np.dtype(dtype).type
        self.lib = NumpyLibrary(self.dtype)
        self.precision = np.dtype(dtype).name
        self.backend = backend  # the backend named in errors: "numba" when its compiled programs read values here

    # leaves
    def const(self, value):
        if isinstance(value, sp.MatrixBase):
            m, n = value.shape
            return np.array([[self.lib.number(value[i, j]) for j in range(n)] for i in range(m)], dtype=self.dtype)
        return np.full((1, 1), self.lib.number(value), dtype=self.dtype)

    def from_user(self, value, shape, name="value"):
        """User data for the leaf ``name`` of ``shape`` (with any leading batch axes) as an array of ``dtype``.

        Raises:
            ShapeError: when the trailing axes are not ``shape`` (names the leaf and both shapes).
            ConventionError: a value that is not a number or an array of numbers (text, None).
        """
        if type(value) is np.ndarray and value.dtype == self.dtype and value.shape[value.ndim - len(shape):] == shape:
            # the common case, checked at once (the general check cost 0.5 ms a call for the 101 inputs of a
            # scalar RNN at T = 100, 0.2 ms for the 21 of a 16-step Elman RNN)
            return value[..., None, None] if shape == () else value
        shape = tuple(shape)
        check_user_shape(value, shape, name, self.backend, batch=True)
        try:
            arr = None if value is None else np.asarray(value, dtype=self.dtype)  # NumPy would read None as nan
        except (TypeError, ValueError):  # text, a dict: nothing NumPy reads as a number
            arr = None
        if arr is None:
            raise ConventionError(f"the value given for {name} is not a number or an array of numbers (got "
                                  f"{type(value).__name__} {reprlib.repr(value)}); give floats, a NumPy array or "
                                  f"nested lists of numbers")
        return arr[..., None, None] if shape == () else arr

    def scalar(self, expr, env):
        return np.asarray(evaluate(expr, self.lib, env), dtype=self.dtype) * np.ones((1, 1), self.dtype)

    def apply(self, lam, a):
        (x,) = lam.variables
        return np.asarray(evaluate(lam.expr, self.lib, {}, {x: a}), dtype=self.dtype) * np.ones_like(a)

    # arithmetic
    def add(self, a, b):
        return a + b

    def mul(self, a, b):
        return a * b

    def div(self, a, b, out=None):
        """a / b; a division by zero gives ±inf or nan, which the output check reports (``out``: the array to
        write the quotient into, as NumPy's)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return a / b if out is None else np.divide(a, b, out=out)

    def neg(self, a):
        return -a

    def transpose(self, a):
        """aᵀ over the last two axes: a view, except for a matrix with no batch axes (a weight such as W_hᵀ, read by
        a matrix product at every step), which is copied into row-major order once, so that BLAS reads it as it
        is laid out (x W_hᵀ at 64×64: 14.1 µs with the transposed view, 10.3 µs with the copy, which costs 1.9 µs)."""
        t = np.swapaxes(a, -1, -2)
        return np.ascontiguousarray(t) if a.ndim == 2 else t

    def matmul(self, a, b):
        if b.ndim == 2 and a.ndim > 2:  # batch of row blocks times one matrix: a single matrix product
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))
        return a @ b

    # reductions
    def sum(self, a, axis):
        if axis is None:
            return np.sum(a, axis=(-2, -1), keepdims=True)
        return np.sum(a, axis=-2 if axis == 0 else -1, keepdims=True)

    def mean(self, a, axis, count):
        """Σ/n over ``axis``; where the entries are all equal, exactly their value (0.1 + 0.1 + 0.1 ≠ 0.3 in float64)."""
        s = a[..., :1, :1] if axis is None else (a[..., :1, :] if axis == 0 else a[..., :, :1])
        equal = np.all(a == s, axis=(-2, -1) if axis is None else (-2 if axis == 0 else -1), keepdims=True)
        return np.where(equal, s, self.sum(a, axis) / count)

    def broadcast_to(self, a, shape):
        return np.broadcast_to(a, a.shape[:-2] + tuple(shape)).copy()

    # indexing
    def entry(self, a, i, j):
        return a[..., i : i + 1, j : j + 1]

    def select(self, a, rows, cols):
        """a[..., rows, cols]: a view when both are runs of consecutive indices (a head's columns), else a copy."""
        return a[..., _run_or_list(rows), :][..., _run_or_list(cols)]

    def place(self, a, rows, cols, shape):
        out = np.zeros(a.shape[:-2] + tuple(shape), dtype=self.dtype)
        cols = list(cols)
        for ii, r in enumerate(rows):
            out[..., r, cols] += a[..., ii, :]
        return out

    def concat(self, vals, axis):
        lead = np.broadcast_shapes(*[v.shape[:-2] for v in vals])
        vals = [np.broadcast_to(v, lead + v.shape[-2:]) for v in vals]
        return np.concatenate(vals, axis=-1 if axis == 1 else -2)

    def take_rows(self, a, ids):
        return a[..., list(ids), :]

    def take_along(self, a, cols):
        m = a.shape[-2]
        return a[..., np.arange(m), list(cols)][..., None]

    def place_along(self, a, cols, shape):
        out = np.zeros(a.shape[:-2] + tuple(shape), dtype=self.dtype)
        out[..., np.arange(shape[0]), list(cols)] = a[..., 0]
        return out

    # batch reductions (gradients of weights shared by every example)
    def batch_sum(self, a):
        return a.sum(axis=tuple(range(a.ndim - 2))) if a.ndim > 2 else a

    def batch_dot(self, a, b):
        """Σ over batch axes of a_b·b_b for two scalar rows (trailing shape (1, 1)), as one dot product."""
        if a.shape == b.shape:
            return np.dot(a.reshape(-1), b.reshape(-1)).reshape(1, 1)
        return self.batch_sum(a * b)

    def batch_tn(self, a, b):
        """Σ over batch axes of a_bᵀ b_b as one matrix product."""
        if a.ndim == 2 and b.ndim == 2:
            return a.T @ b
        if a.shape[:-2] == b.shape[:-2]:  # both batched alike (the usual case): no broadcasting to work out
            return a.reshape(-1, a.shape[-1]).T @ b.reshape(-1, b.shape[-1])
        lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, lead + a.shape[-2:]).reshape(-1, a.shape[-1])
        b = np.broadcast_to(b, lead + b.shape[-2:]).reshape(-1, b.shape[-1])
        return a.T @ b

    # softmax family
    def softmax_rows(self, a, allowed):
        return _softmax(a, allowed)

    def logsumexp_rows(self, a):
        return _lse(a)

    def cross_entropy_rows(self, logits, cols, lse, target):
        """ℓ_t = log Σ_j e^{s_tj}, s_tj = Z_tj − Z_{t,c_t}, shifted by max_j s_tj: no difference of large numbers."""
        with np.errstate(invalid="ignore"):
            return _lse(logits - self.take_along(logits, cols))

    # checks
    def first_nonfinite(self, value, allow_infinity=False):
        bad = np.isnan(value) if allow_infinity else ~np.isfinite(value)
        if not bad.any():
            return None
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return idx, value[idx]

    def to_output(self, value, shape):
        return value[..., 0, 0] if shape == () else value
