"""Support for tests/test_block_properties.py: outcome classes, exact random values, and comparisons.

Every example of a block ends in one class (:data:`OUTCOMES`):

* ``correct``: every backend agrees with the reference within the stated tolerance;
* ``clear error``: the input is invalid by definition (the reference rejects it or it is undefined), and the block
  raised the expected error of ``symseq/errors.py`` with a message naming what was expected;
* ``wrong``: a value that disagrees; an invalid input accepted; a valid input refused; or a refusal of the wrong
  class or whose message does not say what was expected;
* ``nan/inf``: a NaN or infinity (or a row refused as evaluating to one) where the definition gives a finite value;
* ``traceback``: any other exception, from deep inside SymPy, NumPy or torch.

The suite fails on ``wrong``, ``nan/inf`` and ``traceback`` (:data:`FAILING`). A :class:`Tally` counts the classes
of one block's examples and prints them, one line per block (shown by ``pytest -rA``).
"""

from __future__ import annotations

import re
import sys
import traceback
from collections import Counter
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from symseq import EvaluationError, SymseqError, evaluate, ops

from lazy_torch import torch  # the module that uses these helpers skips itself without torch

OUTCOMES = ("correct", "clear error", "wrong", "nan/inf", "traceback")
FAILING = ("wrong", "nan/inf", "traceback")
EXAMPLES = 200  # per block, with -m slow
FAST = 25  # per block, in the default run
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
U = 2.0 ** -53  # the unit roundoff of float64
MP = mpmath.MPContext()
MP.dps = 50


# ---------------------------------------------------------------------------
# outcomes
# ---------------------------------------------------------------------------


class Disagreement(AssertionError):
    """A value that disagrees with the reference beyond the stated tolerance."""


class NonFinite(AssertionError):
    """A NaN or infinity where the reference (and the definition) gives a finite value."""


@dataclass(frozen=True)
class Invalid:
    """An input invalid by definition: the block must raise ``error`` with a message matching ``says``."""

    why: str
    error: type
    says: str


@dataclass(frozen=True)
class Verdict:
    outcome: str
    detail: str = ""


def classify(check, invalid: Invalid | None) -> Verdict:
    """Run ``check()`` (build the block and compare it) and classify what happened."""
    try:
        note = check()
    except Disagreement as e:
        return Verdict("wrong", str(e))
    except NonFinite as e:
        return Verdict("nan/inf", str(e))
    except SymseqError as e:
        msg = f"{type(e).__name__}: {e}"
        if invalid is None:
            if isinstance(e, EvaluationError) and re.search(r"evaluates to (-?inf|nan)", str(e)):
                return Verdict("nan/inf", "a defined value was refused as non-finite: " + msg)
            return Verdict("wrong", "a valid input was refused: " + msg)
        if not isinstance(e, invalid.error):
            return Verdict("wrong", f"{invalid.why}: expected {invalid.error.__name__}, got {msg}")
        if not re.search(invalid.says, str(e)):
            return Verdict("wrong", f"{invalid.why}: the message does not say /{invalid.says}/: {msg}")
        return Verdict("clear error", invalid.why)
    except Exception as e:  # noqa: BLE001 - anything else is a traceback from inside a library
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__, limit=-4))
        return Verdict("traceback", f"{type(e).__name__}: {e}\n{tb}")
    if invalid is not None:
        return Verdict("wrong", f"{invalid.why}: accepted (expected {invalid.error.__name__} /{invalid.says}/)")
    return Verdict("correct", note or "")


class Tally:
    """The classes of one block's examples; :meth:`run` raises on a failing class so that hypothesis shrinks it."""

    def __init__(self, block: str, examples: int = EXAMPLES):
        self.block = block
        self.examples = examples
        self.counts: Counter = Counter()
        self.notes: Counter = Counter()

    def run(self, check, invalid: Invalid | None = None):
        v = classify(check, invalid)
        self.counts[v.outcome] += 1
        if v.outcome == "clear error" or (v.outcome == "correct" and v.detail):
            self.notes[v.detail] += 1
        if v.outcome in FAILING:
            raise AssertionError(f"{self.block}: {v.outcome}: {v.detail}")

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        classes = ", ".join(f"{o}={self.counts[o]}" for o in OUTCOMES)
        return f"[block properties] {self.block}: {self.total} examples: {classes}"

    def report(self, record_property=None):
        """Print the counts (and the kinds of clear errors and notes), record them, and check the run."""
        print(self.line())
        for why, n in sorted(self.notes.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"    {n:4d} × {why}")
        if record_property is not None:
            record_property("block_property_counts", {o: self.counts[o] for o in OUTCOMES})
        assert not any(self.counts[o] for o in FAILING), self.line()
        n = self.examples
        assert self.total >= n, f"{self.block}: only {self.total} examples ran (at least {n} are needed)"
        assert self.counts["correct"] >= n // 2, f"{self.block}: too few valid examples: {self.line()}"


# ---------------------------------------------------------------------------
# exact random values
# ---------------------------------------------------------------------------

DENOMINATORS = (1, 2, 4, 5, 8, 10, 16, 100)


class Rationals:
    """Exact handout-like numbers n/d (0.2, −1.25, 3/16) with lo ≤ n ≤ hi and d one of ``denominators``."""

    def __init__(self, lo: int, hi: int, denominators):
        self.lo, self.hi, self.denominators = lo, hi, tuple(denominators)
        self.strategy = st.builds(sp.Rational, st.integers(lo, hi), st.sampled_from(self.denominators))


def rationals(lo: int = -30, hi: int = 30, denominators=DENOMINATORS) -> Rationals:
    return Rationals(lo, hi, denominators)


def matrix(draw, m: int, n: int, elements: Rationals | None = None) -> sp.ImmutableMatrix:
    """An m×n matrix of exact entries n_ij/d: one numerator per entry and one denominator per matrix (fewer draws,
    so the examples are fast to generate; the numerators still reach 0 and both ends of their range)."""
    el = elements if elements is not None else rationals()
    nums = draw(st.lists(st.integers(el.lo, el.hi), min_size=m * n, max_size=m * n))
    d = draw(st.sampled_from(el.denominators))
    return sp.ImmutableMatrix(m, n, [sp.Rational(k, d) for k in nums])


def distinct_sizes(draw, k: int, lo: int = 1, hi: int = 5) -> list[int]:
    """k pairwise-distinct sizes in lo..hi, so that a swapped axis cannot pass."""
    return draw(st.lists(st.integers(lo, hi), min_size=k, max_size=k, unique=True))


def bool_matrix(draw, m: int, n: int) -> np.ndarray:
    return np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n)), dtype=bool).reshape(m, n)


def f64(value) -> np.ndarray:
    """An exact SymPy matrix (or number) as float64, each entry correctly rounded."""
    if isinstance(value, sp.MatrixBase):
        return np.array([[_float(value[i, j]) for j in range(value.shape[1])] for i in range(value.shape[0])])
    return np.array(_float(value))


def _float(x) -> float:
    x = sp.sympify(x)
    if not x.is_Rational:  # an exact closed form such as sin(1): 30 digits, then to float64
        return float(sp.N(x, 30))
    return int(x.p) / int(x.q)  # Python's int division is correctly rounded


def t64(value, grad: bool = True):
    """A float64 torch tensor of an exact value (or a float array), a leaf of autograd when ``grad``."""
    arr = value if isinstance(value, np.ndarray) else f64(value)
    return torch.tensor(arr, dtype=torch.float64, requires_grad=grad)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------


def as_float(value) -> np.ndarray:
    """A backend's value (ndarray, tensor, mpf, object array of mpf, SymPy) as a float64 array."""
    if "torch" in sys.modules and isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().astype(np.float64)
    if isinstance(value, sp.MatrixBase):
        return np.array(value.evalf(20).tolist(), dtype=np.float64)
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.dtype == object:
        return np.vectorize(float, otypes=[np.float64])(arr) if arr.size else arr.astype(np.float64)
    return np.asarray(arr, dtype=np.float64)


def close(what: str, ours, ref, *, atol: float, rtol: float = 0.0):
    """Raise :class:`NonFinite` or :class:`Disagreement` unless |ours − ref| ≤ atol + rtol·|ref| entrywise."""
    ours, ref = as_float(ours), as_float(ref)
    if ours.size != ref.size:
        raise Disagreement(f"{what}: {ours.size} entries (shape {ours.shape}), the reference has {ref.shape}")
    ours, ref = ours.reshape(ref.shape), ref
    if not np.all(np.isfinite(ref)):
        raise AssertionError(f"{what}: the reference itself is not finite ({ref}); the test must not compare it")
    if not np.all(np.isfinite(ours)):
        raise NonFinite(f"{what}: {ours} where the reference is finite ({ref})")
    err = np.abs(ours - ref)
    bound = atol + rtol * np.abs(ref)
    if np.any(err > bound):
        k = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        raise Disagreement(f"{what}: entry {tuple(int(i) for i in k)} is {ours[k]!r}, the reference {ref[k]!r} "
                           f"(|Δ| = {err[k]:.3g} > {bound[k]:.3g}); max |Δ| = {err.max():.3g}")


def close_mp(what: str, ours, ref, *, rel: float = 1e-40, size: float = 1.0):
    """mpmath values (50 digits) against an mpmath reference: |Δ| ≤ rel·(size + |ref|) entrywise.

    ``size`` is the magnitude of the terms the value sums (at least 1): a gradient that cancels to 0 from terms of
    size 10¹⁴ is exact to 50 digits of those terms, not of 0."""
    ours_l = _flat_mp(ours)
    ref_l = _flat_mp(ref)
    if len(ours_l) != len(ref_l):
        raise Disagreement(f"{what}: {len(ours_l)} entries, the reference has {len(ref_l)}")
    for k, (a, b) in enumerate(zip(ours_l, ref_l)):
        if not MP.isfinite(a):
            raise NonFinite(f"{what}: entry {k} is {a} where the reference is {MP.nstr(b, 20)}")
        if abs(a - b) > rel * (max(size, 1.0) + abs(b)):
            raise Disagreement(f"{what}: entry {k} is {MP.nstr(a, 30)}, the reference {MP.nstr(b, 30)} "
                               f"(|Δ| = {MP.nstr(abs(a - b), 5)})")


def _flat_mp(v) -> list:
    if isinstance(v, np.ndarray):
        return [MP.mpf(x) for x in v.ravel().tolist()]
    if isinstance(v, (list, tuple)):
        out = []
        for x in v:
            out.extend(_flat_mp(x))
        return out
    return [MP.mpf(v)]


# ---------------------------------------------------------------------------
# a ledger against a torch reference: values and every gradient
# ---------------------------------------------------------------------------


def upstream(L, outputs: list, G: list) -> str:
    """ℓ := Σ_k Σ Ḡ_k ⊙ out_k with exact upstream matrices Ḡ_k: its gradient holds every vector-Jacobian
    product."""
    terms = []
    for k, (o, g) in enumerate(zip(outputs, G)):
        Gk = L.input(f"Ḡ{k}", g)
        terms.append(ops.Sum(Gk * L.handle(o), None))
    L.define("ℓ", ops.add(*terms) if len(terms) > 1 else terms[0])
    return "ℓ"


def leaf_tensors(L, skip=("Ḡ",)) -> dict:
    """Every leaf of L with a value, as a float64 torch leaf requiring grad (upstream matrices left out)."""
    return {it.name: t64(it.value) for it in L.leaves if it.value is not None and not it.name.startswith(skip)}


def against_torch(L, outputs: list, G: list, reference, *, invalid: Invalid | None = None, atol: float = 1e-9,
                  rtol: float = 1e-9, backends=("numpy", "torch"), wrt=None, tolerance=None):
    """Compare the rows ``outputs`` and ∂ℓ/∂leaf (ℓ = Σ Ḡ ⊙ out) on ``backends`` with torch autograd.

    ``reference(T)`` takes the leaves as float64 torch tensors (a dict by name) and returns one tensor per output,
    computed independently (torch.nn.functional, torch.nn modules). ``wrt``: the leaves whose gradients are compared
    (default: every leaf). ``tolerance(name, ref)`` may return (atol, rtol) for one comparison; the default is
    ``atol`` times the largest entry of the reference (at least 1) plus ``rtol`` times each entry.

    For an ``invalid`` example the symseq backends are evaluated and the reference is not: the block must have
    refused the input by then (the caller's :func:`classify` reports an input that was accepted).
    """
    ell = upstream(L, outputs, G)
    T = leaf_tensors(L)
    wrt = list(T) if wrt is None else list(wrt)
    grads = L.backward(ell, wrt=wrt)
    if invalid is not None:
        for backend in backends:
            evaluate(L, backend)
        return grads
    refs = reference(T)
    if len(refs) != len(outputs):
        raise AssertionError("the reference returns one tensor per output")
    loss = sum((t64(g, grad=False) * r).sum() for g, r in zip(G, refs))
    loss.backward()
    expected = {o: r.detach() for o, r in zip(outputs, refs)}
    for n in wrt:
        g = T[n].grad if T[n].grad is not None else torch.zeros_like(T[n])
        if n in grads:
            expected[grads.name(n)] = g
        elif float(g.abs().max()) != 0.0:  # no adjoint row: the leaf must not influence ℓ
            raise Disagreement(f"{n} has no adjoint row, but torch's gradient is {g}")
    for backend in backends:
        vals = evaluate(L, backend, targets=list(expected))
        for name, ref in expected.items():
            a, r = tolerance(name, ref) if tolerance else (atol * scale_of(ref), rtol)
            close(f"{backend} {name}", vals[name], ref, atol=a, rtol=r)
    return grads


def scale_of(*arrays) -> float:
    return max([1.0] + [float(np.max(np.abs(as_float(a)))) for a in arrays if as_float(a).size])
