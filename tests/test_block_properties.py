"""Property-based checks of every public block against independent torch float64 code and mpmath (issue 12).

For each block, hypothesis draws at least 200 examples in the slow run (``-m slow``) and 25 in the default one
(``derandomize=True``, so CI is reproducible): random sizes
(pairwise distinct where a swapped axis could otherwise pass, T, D ≤ 5), exact random values (handout-like
Rationals n/d), and edge cases (near-constant rows for the norms, logits ±10¹⁶ for the losses, empty and
fully masked rows, zero, negative, float and NumPy sizes, masks in every convention and entries of none). Each
example builds the block on a fresh :class:`~symseq.Ledger`, appends ℓ = Σ Ḡ ⊙ out with an exact random upstream
Ḡ, runs the symbolic backward pass, and compares the values and every gradient on the NumPy and torch backends
with torch autograd through an implementation written here from torch.nn.functional and torch.nn modules; where
float64 is not enough (cancellation in the norms, huge logits in the losses) the mpmath backend at 50 digits is
compared with a reference written directly in mpmath.

Each example is classified (see ``block_property_helpers``): correct, clear error (an invalid input refused by
the expected error of ``symseq/errors.py`` with a message naming what was expected), wrong, nan/inf, or
traceback; the suite fails on the last three and prints the counts per block (``pytest -rA`` shows them).

Tolerances: float64 against float64 agree to 10⁻⁹ relative to the largest entry of the compared array (10⁻⁸ for
the Transformer block; the sizes are small and the values moderate, so this leaves room for another order of
operations only); mpmath (50 digits) against a 60-digit mpmath reference to 10⁻⁴⁰ of the size of the terms a
value sums (10⁻⁴⁶ of the largest logit for the losses: 50 digits of 3·10¹⁷ + 0.2 are 10⁻³³ of it); the float
backends of a norm or loss against the mpmath reference evaluated at their float64-rounded inputs, to a few
units of roundoff times the conditioning (|x|/σ for a norm, the shifted logits for a loss). Where that bound
says float64 cannot decide (a near-constant row, a ReLU preactivation within rounding of its kink), the mpmath
backend decides and the example says so in the printed notes.
"""

from __future__ import annotations

import math
import re
from types import SimpleNamespace as Ex

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from block_property_helpers import (EXAMPLES, FAST, SETTINGS, U, Disagreement, Invalid, Tally, against_torch,
                                    as_float, bool_matrix, close, close_mp, distinct_sizes, f64, matrix, rationals,
                                    scale_of, t64)
from symseq import (ConventionError, EvaluationError, Ledger, MaskError, ShapeError, blocks, evaluate, exact,
                    ops)
from symseq.blocks import Mask, masks

from lazy_torch import F, needs_torch, torch

pytestmark = needs_torch


@pytest.fixture(params=[FAST, pytest.param(EXAMPLES, marks=pytest.mark.slow)], ids=lambda n: f"{n} examples")
def examples(request) -> int:
    """How many examples hypothesis draws for a block: a few in the default run, all of them with ``-m slow``."""
    return request.param


def run_block(name: str, strategy, check, record_property, examples: int):
    """Run ``check(example)`` on ``examples`` examples of ``strategy``; print and record the classes; fail on a bad
    one."""
    tally = Tally(name, examples)

    @settings(SETTINGS, max_examples=examples)
    @given(strategy)
    def run(ex):
        tally.run(lambda: check(ex), ex.invalid)

    run()
    tally.report(record_property)


class Lazy:
    """A value built inside the check (so that its own errors are classified), shown by its recipe."""

    def __init__(self, make, recipe: str):
        self.make, self.recipe = make, recipe

    def __repr__(self):
        return self.recipe


def made(value):
    return value.make() if isinstance(value, Lazy) else value


def upstream_for(draw, *shapes):
    return [matrix(draw, m, n, rationals(-9, 9)) for m, n in shapes]


# ---------------------------------------------------------------------------
# masks, as drawn for attention: every convention, and entries of none
# ---------------------------------------------------------------------------

MASK_FORMS = ("none", "causal", "bool", "int", "list", "torch", "sympy", "sympy booleans", "keep", "exclude",
              "additive")
BAD_MASKS = ("float01", "half", "two", "nan", "text", "finite additive", "transposed")


def draw_mask(draw, T: int, S: int, *, forms=MASK_FORMS, bad: bool = False):
    """A T×S attention mask: (the object given to the block, its keep-matrix for the reference, Invalid or None).

    The keep-matrix of the reference is the drawn boolean matrix (or torch.ones(T, S).tril() for "causal"),
    never symseq's reading of the mask.
    """
    if bad:
        kind = draw(st.sampled_from(BAD_MASKS))
        keep = bool_matrix(draw, T, S)
        m = keep.astype(np.float64)
        if kind == "float01":
            return m, None, Invalid("a 0/1 float mask without a convention", MaskError, r"float mask .*Mask\.keep")
        if kind in ("half", "two", "nan"):
            i, j = draw(st.integers(0, T - 1)), draw(st.integers(0, S - 1))
            obj = keep.astype(object)
            obj[i, j] = {"half": 0.5, "two": 2, "nan": float("nan")}[kind]
            return obj, None, Invalid(f"a mask entry {obj[i, j]!r}", MaskError, rf"entry \(row {i}, column {j}\)")
        if kind == "text":
            obj = keep.astype(object)
            obj[0, 0] = "False"
            return obj, None, Invalid("a mask entry 'False' (text)", MaskError, r"not text")
        if kind == "finite additive":
            add = np.where(keep, 0.0, -1e9)
            add[0, 0] = -1e9
            return (Lazy(lambda: Mask.additive(add), f"Mask.additive({add.tolist()})"), None,
                    Invalid("an additive mask with −1e9 for −∞", MaskError,
                            r"large negative number is not −∞"))
        return (np.ones((S + 1, T), dtype=bool), None,
                Invalid("a mask of the wrong shape", ShapeError,
                        rf"has shape {S + 1}×{T} but the scores are {T}×{S}"))
    kind = draw(st.sampled_from(forms))
    if kind == "none":
        return None, np.ones((T, S), dtype=bool), None
    if kind == "causal":
        return "causal", torch.ones(T, S).tril().bool().numpy(), None
    keep = bool_matrix(draw, T, S)
    if draw(st.booleans()):  # most rows keep at least one source
        keep[~keep.any(axis=1), draw(st.integers(0, S - 1))] = True
    obj = {"bool": lambda: keep, "int": lambda: keep.astype(np.int64), "list": lambda: keep.tolist(),
           "torch": lambda: torch.tensor(keep), "sympy": lambda: sp.Matrix(keep.astype(int)),
           "sympy booleans": lambda: [[sp.S.true if k else sp.S.false for k in row] for row in keep],
           "keep": lambda: Mask.keep(keep), "exclude": lambda: Mask.exclude(~keep),
           "additive": lambda: Mask.additive(np.where(keep, 0.0, -np.inf))}[kind]()
    return obj, keep, None


def no_source(ex):
    """The Invalid of a mask that leaves a query row with no source, when such rows are errors; else None.

    An example already invalid for another reason gets ``empty_rows="zero"``, so that it is invalid once."""
    keep = ex.keep
    if ex.invalid is not None:
        ex.empty_rows = "zero"
        return ex.invalid
    if keep is None or ex.empty_rows != "error" or keep.any(axis=1).all():
        return None
    row = int(np.flatnonzero(~keep.any(axis=1))[0])
    return Invalid("a query row with no allowed source", MaskError, rf"query position {row} has no allowed source")


def attention_reference(Q, K, V, keep, divisor: float):
    """(O, A) in torch: O from F.scaled_dot_product_attention (a zero row where no source is kept), A by hand."""
    keep_t = torch.tensor(keep)
    O = F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_t, scale=1.0 / divisor)
    scores = (Q @ K.T) / divisor
    rows = keep_t.any(dim=1, keepdim=True)
    masked = scores.masked_fill(~keep_t, float("-inf")).masked_fill(~rows, 0.0)
    A = torch.softmax(masked, dim=-1) * rows
    return O, A


# ---------------------------------------------------------------------------
# scaled dot-product attention
# ---------------------------------------------------------------------------

BAD_SCALES = {"zero": 0, "infinite": sp.oo, "minus infinite": -sp.oo, "nan": sp.nan, "float": 0.5}


@st.composite
def sdp_examples(draw):
    T, S, d_k, d_v = distinct_sizes(draw, 4)
    ex = Ex(T=T, S=S, d_k=d_k, d_v=d_v, invalid=None, empty_rows=draw(st.sampled_from(["error", "zero"])),
            scale=None, K_width=d_k, V_rows=S)
    roll = draw(st.integers(0, 9))
    ex.mask, ex.keep, ex.invalid = draw_mask(draw, T, S, bad=roll == 9)
    zero_length = False
    if roll == 8:
        what = draw(st.sampled_from(["K width", "V rows", "no query"] + list(BAD_SCALES)))
        if what == "no query":
            zero_length = True
            ex.invalid = Invalid("a sequence of zero queries", ShapeError,
                                 rf"Q: the numbers of rows and columns must be positive integers; "
                                 rf"got shape \(0, {d_k}\)")
        elif what == "K width":
            ex.K_width = d_k + 1
            ex.invalid = Invalid("Q and K of different widths", ShapeError,
                                 rf"same width d_k \(got {d_k} and {d_k + 1}\)")
        elif what == "V rows":
            ex.V_rows = S + 1
            ex.invalid = Invalid("K and V with different numbers of positions", ShapeError,
                                 rf"K has {S} positions but V has {S + 1}")
        else:
            ex.scale = BAD_SCALES[what]
            says = (r"scale: got the float 0.5, which is not exact" if what == "float" else
                    r"scale is the divisor of the scores .* must be a finite nonzero real number; got scale = ")
            ex.invalid = Invalid(f"a {what} scale", ConventionError, says)
    elif draw(st.booleans()):
        ex.scale = draw(rationals(-30, 30).strategy.filter(lambda r: r != 0))
    ex.invalid = no_source(ex)
    ex.Q, ex.K, ex.V = matrix(draw, T, d_k), matrix(draw, S, ex.K_width), matrix(draw, ex.V_rows, d_v)
    if zero_length:
        ex.Q = sp.zeros(0, d_k)
    ex.G = upstream_for(draw, (T, d_v), (T, S))
    return ex


def check_sdp(ex):
    L = Ledger("scaled dot-product")
    Q, K, V = L.input("Q", ex.Q), L.input("K", ex.K), L.input("V", ex.V)
    head = blocks.scaled_dot_product(L, Q, K, V, mask=made(ex.mask), scale=ex.scale, empty_rows=ex.empty_rows)
    divisor = math.sqrt(ex.d_k) if ex.scale is None else float(ex.scale)

    def reference(T):
        return list(attention_reference(T["Q"], T["K"], T["V"], ex.keep, divisor))

    against_torch(L, [head.O.name, head.A.name], ex.G, reference, invalid=ex.invalid)


def test_scaled_dot_product(record_property, examples):
    run_block("attention: scaled_dot_product", sdp_examples(), check_sdp, record_property, examples)


# ---------------------------------------------------------------------------
# one attention head (projections, cross-attention, both orientations)
# ---------------------------------------------------------------------------


def weight(draw, n_in: int, n_out: int, orientation: str, elements=None):
    """A weight of a map from n_in to n_out features, stored in×out (``in_out``) or out×in (``out_in``)."""
    return (matrix(draw, n_in, n_out, elements) if orientation == "in_out"
            else matrix(draw, n_out, n_in, elements))


def project_ref(X, W, orientation: str):
    return X @ W if orientation == "in_out" else F.linear(X, W)


@st.composite
def head_examples(draw):
    T, S, D, d_k, d_v = distinct_sizes(draw, 5)
    orientation = draw(st.sampled_from(["in_out", "out_in"]))
    cross = draw(st.booleans())
    S = S if cross else T
    ex = Ex(T=T, S=S, D=D, d_k=d_k, d_v=d_v, orientation=orientation, cross=cross, invalid=None,
            empty_rows=draw(st.sampled_from(["error", "zero"])))
    roll = draw(st.integers(0, 9))
    ex.mask, ex.keep, ex.invalid = draw_mask(draw, T, S, bad=roll == 9)
    ex.W = {n: weight(draw, D, d_v if n == "W_V" else d_k, orientation) for n in ("W_Q", "W_K", "W_V")}
    ex.given_orientation = orientation
    if roll == 8:
        what = draw(st.sampled_from(["swapped orientation", "unknown orientation", "K width"]))
        if what == "swapped orientation":
            ex.given_orientation = "out_in" if orientation == "in_out" else "in_out"
            ex.invalid = Invalid("weights stored in the other orientation", ShapeError,
                                 rf"query projection Q: X is {T}×{D} but W is .*must equal X's width {D}")
        elif what == "unknown orientation":
            ex.given_orientation = "row_major"
            ex.invalid = Invalid("an unknown orientation", ConventionError, r"unknown weight orientation 'row_major'")
        else:
            ex.W["W_K"] = weight(draw, D, d_k + 1, orientation)
            ex.invalid = Invalid("W_K wider than W_Q", ShapeError, rf"same width d_k \(got {d_k} and {d_k + 1}\)")
    ex.invalid = no_source(ex)
    ex.H = matrix(draw, T, D)
    ex.X_kv = matrix(draw, S, D) if cross else None
    ex.G = upstream_for(draw, (T, d_v), (T, S))
    return ex


def check_head(ex):
    L = Ledger("attention head")
    H = L.input("H", ex.H)
    X_kv = L.input("X_kv", ex.X_kv) if ex.cross else None
    W = {n: L.parameter(n, v) for n, v in ex.W.items()}
    head = blocks.attention_head(L, H, W["W_Q"], W["W_K"], W["W_V"], orientation=ex.given_orientation,
                                 mask=made(ex.mask), empty_rows=ex.empty_rows, X_kv=X_kv)

    def reference(T):
        src = T["X_kv"] if ex.cross else T["H"]
        Q = project_ref(T["H"], T["W_Q"], ex.orientation)
        K, V = project_ref(src, T["W_K"], ex.orientation), project_ref(src, T["W_V"], ex.orientation)
        return list(attention_reference(Q, K, V, ex.keep, math.sqrt(ex.d_k)))

    against_torch(L, [head.O.name, head.A.name], ex.G, reference, invalid=ex.invalid)


def test_attention_head(record_property, examples):
    run_block("attention: attention_head", head_examples(), check_head, record_property, examples)


# ---------------------------------------------------------------------------
# multi-head attention: heads of any widths, W_O in both orientations
# ---------------------------------------------------------------------------


@st.composite
def multi_head_examples(draw):
    T, D = distinct_sizes(draw, 2, 2, 5)
    n_heads = draw(st.integers(1, 3))
    widths = [(draw(st.integers(1, 3)), draw(st.integers(1, 3))) for _ in range(n_heads)]
    orientation = draw(st.sampled_from(["in_out", "out_in"]))
    ex = Ex(T=T, D=D, widths=widths, orientation=orientation, invalid=None,
            empty_rows=draw(st.sampled_from(["error", "zero"])))
    roll = draw(st.integers(0, 9))
    ex.mask, ex.keep, ex.invalid = draw_mask(draw, T, T, bad=roll == 9)
    ex.heads = [(weight(draw, D, dk, orientation), weight(draw, D, dk, orientation), weight(draw, D, dv, orientation))
                for dk, dv in widths]
    hv = sum(dv for _, dv in widths)
    ex.W_O = weight(draw, hv, D, orientation)
    if roll == 8:
        ex.W_O = weight(draw, hv + 1, D, orientation)
        ex.invalid = Invalid("W_O that does not take the concatenated heads", ShapeError,
                             rf"output map W_O: X is {T}×{hv} but W is")
    ex.invalid = no_source(ex)
    ex.H = matrix(draw, T, D)
    ex.G = upstream_for(draw, (T, D))
    return ex


def check_multi_head(ex):
    L = Ledger("multi-head attention")
    H = L.input("H", ex.H)
    heads = [tuple(L.parameter(f"{n}^({i})", v) for n, v in zip(("W_Q", "W_K", "W_V"), ws))
             for i, ws in enumerate(ex.heads, start=1)]
    W_O = L.parameter("W_O", ex.W_O)
    mha = blocks.multi_head(L, H, heads, W_O, orientation=ex.orientation, mask=made(ex.mask),
                            empty_rows=ex.empty_rows)

    def reference(T):
        outs = []
        for i, (dk, _) in enumerate(ex.widths, start=1):
            Q, K, V = (project_ref(T["H"], T[f"{n}^({i})"], ex.orientation) for n in ("W_Q", "W_K", "W_V"))
            outs.append(attention_reference(Q, K, V, ex.keep, math.sqrt(dk))[0])
        return [project_ref(torch.cat(outs, dim=1), T["W_O"], ex.orientation)]

    against_torch(L, [mha.out.name], ex.G, reference, invalid=ex.invalid)


def test_multi_head(record_property, examples):
    run_block("attention: multi_head", multi_head_examples(), check_multi_head, record_property, examples)


# ---------------------------------------------------------------------------
# masks: masks.* and Mask, their keep-matrices, and attention through them
# ---------------------------------------------------------------------------

BAD_SIZES = {"zero": 0, "negative": -1, "float": 2.0, "bool": True, "text": "3"}
MASK_RECIPES = ("causal", "full", "key_padding", "padding_causal", "combine", "Mask", "check", "validity",
                "batch_validity")


def size(draw, n: int):
    """The size n as a user may pass it: an int or a NumPy integer."""
    return draw(st.sampled_from([n, np.int64(n)]))


def mostly_valid(draw, m: np.ndarray) -> np.ndarray:
    """Most of the time, mark one position of every row (sequence) valid: all-zero rows are drawn, but not mostly."""
    m = np.atleast_2d(m).copy()
    if draw(st.integers(0, 3)) > 0:
        m[~m.any(axis=1), draw(st.integers(0, m.shape[1] - 1))] = True
    return m


def validity_form(draw, m: np.ndarray):
    """A validity vector (or B×T matrix) in one of the forms the blocks take; True = a real position."""
    form = draw(st.sampled_from(["bool", "int", "list", "torch", "exclude", "additive"]))
    return {"bool": lambda: m, "int": lambda: m.astype(np.int64), "list": lambda: m.astype(int).tolist(),
            "torch": lambda: torch.tensor(m), "exclude": lambda: Mask.exclude(~m),
            "additive": lambda: Mask.additive(np.where(m, 0.0, -np.inf))}[form]()


@st.composite
def mask_examples(draw):
    recipe = draw(st.sampled_from(MASK_RECIPES))
    T, S = distinct_sizes(draw, 2)
    ex = Ex(recipe=recipe, T=T, S=S, invalid=None, attend=True, empty_rows=draw(st.sampled_from(["error", "zero"])))
    bad = draw(st.integers(0, 4)) == 4
    if recipe in ("causal", "full"):
        fn = masks.causal if recipe == "causal" else masks.full
        args = [size(draw, T), size(draw, S)]
        if bad:
            which, what = draw(st.integers(0, 1)), draw(st.sampled_from(list(BAD_SIZES)))
            args[which] = BAD_SIZES[what]
            label = r"T \(queries\)" if which == 0 else r"S \(sources\)"
            ex.invalid = Invalid(f"a {what} size", ShapeError, label + " must be a positive integer; got")
        ex.call = Lazy(lambda: fn(*args), f"masks.{recipe}({args[0]!r}, {args[1]!r})")
        ex.expected = torch.ones(T, S).tril().bool().numpy() if recipe == "causal" else np.ones((T, S), dtype=bool)
    elif recipe == "key_padding":
        m = mostly_valid(draw, np.array(draw(st.lists(st.booleans(), min_size=S, max_size=S))))[0]
        given = validity_form(draw, m)
        Tq = size(draw, T)
        ex.call = Lazy(lambda: masks.key_padding(given, Tq), f"masks.key_padding({given!r}, {Tq!r})")
        ex.expected = np.broadcast_to(m, (T, S)).copy()
        if not m.any():
            ex.invalid = Invalid("no real source", MaskError, r"key padding mask marks no position as valid")
    elif recipe == "padding_causal":
        m = mostly_valid(draw, np.array(draw(st.lists(st.booleans(), min_size=T, max_size=T))))[0]
        given = validity_form(draw, m)
        ex.S = T
        ex.call = Lazy(lambda: masks.padding_causal(given), f"masks.padding_causal({given!r})")
        ex.expected = torch.ones(T, T).tril().bool().numpy() & m[None, :]
        if not m.any():
            ex.invalid = Invalid("no real position", MaskError, r"padding mask marks no position as valid")
    elif recipe == "combine":
        a, b = bool_matrix(draw, T, S), bool_matrix(draw, T, S)
        ga, gb = (draw(st.sampled_from([x, x.astype(int), Mask.keep(x), Mask.exclude(~x),
                                        Mask.additive(np.where(x, 0.0, -np.inf))])) for x in (a, b))
        if bad:
            gb = np.ones((S, T), dtype=bool)
            ex.invalid = Invalid("masks of different shapes", ShapeError, rf"same shape .*got {T}×{S}, {S}×{T}")
        ex.call = Lazy(lambda: masks.combine(ga, gb), f"masks.combine({ga!r}, {gb!r})")
        ex.expected = a & b
    elif recipe in ("Mask", "check"):
        keep = bool_matrix(draw, T, S)
        conv = draw(st.sampled_from(["keep", "exclude", "additive"]))
        values = {"keep": keep, "exclude": ~keep, "additive": np.where(keep, 0.0, -np.inf)}[conv]
        if bad:
            values = values.astype(object)
            values[T - 1, S - 1] = draw(st.sampled_from([0.5, -1e30, "1", None, float("nan")]))
            ex.invalid = Invalid(f"an entry {values[T - 1, S - 1]!r} in Mask.{conv}", MaskError,
                                 rf"entry \(row {T - 1}, column {S - 1}\) is")
        target = draw(st.sampled_from(["keep", "exclude", "additive"]))
        if recipe == "Mask":
            ex.call = Lazy(lambda: Mask(values, conv).to(target), f"Mask({values.tolist()}, {conv!r}).to({target!r})")
            ex.expected = {"keep": keep, "exclude": ~keep, "additive": np.where(keep, 0.0, -np.inf)}[target]
            ex.attend = target == "keep"
        else:
            ex.call = Lazy(lambda: masks.check(Mask(values, conv), (T, S), empty_rows="zero"),
                           f"masks.check(Mask({values.tolist()}, {conv!r}), ({T}, {S}), empty_rows='zero')")
            ex.expected = keep
            ex.empty = Lazy(lambda: masks.empty_rows(Mask(values, conv)), "masks.empty_rows(...)")
            ex.torch_form = Lazy(lambda: masks.torch_convention(Mask(values, conv)), "masks.torch_convention(...)")
    elif recipe == "validity":
        m = mostly_valid(draw, np.array(draw(st.lists(st.booleans(), min_size=T, max_size=T))))[0]
        given = validity_form(draw, m)
        n = size(draw, T)
        if bad:
            n = T + 1
            ex.invalid = Invalid("a validity vector of the wrong length", ShapeError,
                                 rf"has {T} entries but there are {T + 1} positions")
        elif not m.any():
            ex.invalid = Invalid("no valid position", MaskError, r"marks no position as valid")
        ex.call = Lazy(lambda: masks.validity(given, n), f"masks.validity({given!r}, {n!r})")
        ex.expected, ex.attend = m, False
    else:  # batch_validity: B = S sequences of T positions
        m = mostly_valid(draw, bool_matrix(draw, S, T))
        given = validity_form(draw, m)
        if bad:
            given = m[0]
            ex.invalid = Invalid("a vector for a batch", ShapeError, r"B×T|batch item")
        elif not m.any(axis=1).all():
            b = int(np.flatnonzero(~m.any(axis=1))[0])
            ex.invalid = Invalid("a sequence with no valid position", MaskError, rf"batch item {b} marks no position")
        ex.call = Lazy(lambda: masks.batch_validity(given, S, T), f"masks.batch_validity({given!r}, {S}, {T})")
        ex.expected, ex.attend = m, False
    if ex.invalid is None and ex.attend and not ex.expected.any(axis=1).all() and ex.empty_rows == "error":
        row = int(np.flatnonzero(~ex.expected.any(axis=1))[0])
        ex.invalid = Invalid("attention with a query row that has no source", MaskError,
                             rf"query position {row} has no allowed source")
    Sx = ex.expected.shape[1] if ex.attend else S
    ex.Q, ex.K, ex.V = matrix(draw, ex.T, 2), matrix(draw, Sx, 2), matrix(draw, Sx, 3)
    ex.G = upstream_for(draw, (ex.T, 3), (ex.T, Sx))
    return ex


def check_mask(ex):
    got = ex.call.make()
    if ex.invalid is not None and not ex.attend:
        return None  # accepted: classified as wrong
    got = np.asarray(got)
    want = ex.expected
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        raise Disagreement(f"{ex.call!r} gave {got.tolist()} ({got.dtype}), expected {want.tolist()} ({want.dtype})")
    if ex.recipe == "check":
        empty, excl = ex.empty.make(), ex.torch_form.make()
        if empty != [int(i) for i in np.flatnonzero(~want.any(axis=1))] or not np.array_equal(excl, ~want):
            raise Disagreement(f"empty_rows gave {empty}, torch_convention gave {excl.tolist()} for {want.tolist()}")
    if not ex.attend:
        return f"correct: {ex.recipe}"
    L = Ledger("attention through a mask")
    Q, K, V = L.input("Q", ex.Q), L.input("K", ex.K), L.input("V", ex.V)
    head = blocks.scaled_dot_product(L, Q, K, V, mask=got, empty_rows=ex.empty_rows)
    against_torch(L, [head.O.name, head.A.name], ex.G,
                  lambda T: list(attention_reference(T["Q"], T["K"], T["V"], want, math.sqrt(2))),
                  invalid=ex.invalid)
    return f"correct: {ex.recipe}, then attention"


def test_masks(record_property, examples):
    run_block("masks: masks.* and Mask", mask_examples(), check_mask, record_property, examples)


# ---------------------------------------------------------------------------
# norms: LayerNorm and RMSNorm, with near-constant, constant, zero and tiny rows
# ---------------------------------------------------------------------------

REF = mpmath.MPContext()
REF.dps = 60  # the mpmath references work at 60 digits; the symseq mpmath backend at 50
NEAR = (2, 6, 10, 14, 17, 20, 25)  # a near-constant row is c + 10^(−e)·k_j


def mp_rows(M, *, rounded=False):
    """An exact matrix as rows of mpf at 60 digits; ``rounded``: the float64 values its entries round to."""
    if rounded:
        return [[REF.mpf(float(x)) for x in row] for row in f64(M)]
    return [[REF.mpf(int(sp.Rational(M[i, j]).p)) / int(sp.Rational(M[i, j]).q) for j in range(M.shape[1])]
            for i in range(M.shape[0])]


def mp_value(x, *, rounded=False):
    r = sp.Rational(x)
    return REF.mpf(_f(r)) if rounded else REF.mpf(int(r.p)) / int(r.q)


def _f(r):
    return int(r.p) / int(r.q)


def mp_norm(kind: str, X, gamma, beta, eps, G):
    """LayerNorm or RMSNorm in mpmath, forward and vector-Jacobian product, written from the definitions.

    LN: x̂ = (x − μ)/σ, σ = √(v + ε), y = γ ⊙ x̂ + β;
        ∂x = (γ ⊙ g − mean(γ ⊙ g) − x̂ · mean(γ ⊙ g ⊙ x̂))/σ.
    RMS: x̂ = x/r, r = √(mean(x²) + ε), y = γ ⊙ x̂; ∂x = (γ ⊙ g − x̂ · mean(γ ⊙ g ⊙ x̂))/r.
    Returns (Y, ∂X, ∂γ, ∂β, the largest |x|/σ of a row, the smallest σ), or None for an undefined row
    (σ = 0).
    """
    T, D = len(X), len(X[0])
    gm = gamma[0] if gamma is not None else [REF.mpf(1)] * D
    Y, dX = [], []
    dg, db = [REF.mpf(0)] * D, [REF.mpf(0)] * D
    cond, smallest = REF.mpf(0), REF.inf
    for t in range(T):
        x = X[t]
        mu = REF.fsum(x) / D if kind == "layer" else REF.mpf(0)
        c = [xi - mu for xi in x]
        var = REF.fsum(ci * ci for ci in c) / D
        sigma = REF.sqrt(var + eps)
        if sigma == 0:
            return None
        xh = [ci / sigma for ci in c]
        cond, smallest = max(cond, max(abs(xi) for xi in x) / sigma), min(smallest, sigma)
        y = [gm[j] * xh[j] + (beta[0][j] if beta is not None else 0) for j in range(D)]
        gy = [gm[j] * G[t][j] for j in range(D)]
        m1 = REF.fsum(gy) / D if kind == "layer" else 0
        m2 = REF.fsum(gy[j] * xh[j] for j in range(D)) / D
        dX.append([(gy[j] - m1 - xh[j] * m2) / sigma for j in range(D)])
        Y.append(y)
        for j in range(D):
            dg[j] += G[t][j] * xh[j]
            db[j] += G[t][j]
    return Y, dX, [dg], [db], cond, smallest


def norm_scale(ex, ref, smallest) -> float:
    """The size of the terms a norm's output or gradient sums: |ref|, |γ|·|Ḡ|·D/σ_min and |β|."""
    g = scale_of(f64(ex.gamma)) if ex.gamma is not None else 1.0
    b = scale_of(f64(ex.beta)) if ex.beta is not None else 0.0
    return scale_of(ref) + g * scale_of(f64(ex.G)) * ex.D * (1 + 1 / float(smallest)) + b


@st.composite
def norm_examples(draw, kind: str):
    T, D = distinct_sizes(draw, 2)
    rows, kinds = [], []
    for _ in range(T):
        k = draw(st.sampled_from(["random", "near-constant", "random", "constant", "random", "huge"] +
                                 (["zero", "tiny"] if kind == "rms" else [])))
        if k == "random":
            row = [draw(rationals().strategy) for _ in range(D)]
        elif k == "near-constant":
            c, e = draw(rationals().strategy), draw(st.sampled_from(NEAR))
            row = [c + sp.Rational(draw(st.integers(-9, 9)), 10 ** e) for _ in range(D)]
        elif k == "constant":
            row = [draw(rationals().strategy)] * D
        elif k == "huge":  # ±10¹⁶ plus small parts that float64 rounds away (its spacing there is 2)
            c = draw(st.sampled_from([10 ** 16, -10 ** 16, 3 * 10 ** 17]))
            row = [c + draw(rationals(-9, 9, (1, 2, 10)).strategy) for _ in range(D)]
        elif k == "zero":
            row = [sp.S.Zero] * D
        else:  # tiny: its squares underflow in float64
            row = [sp.Rational(draw(st.integers(-9, 9)), 10 ** 170) for _ in range(D)]
        rows.append(row)
        kinds.append(k)
    ex = Ex(kind=kind, T=T, D=D, X=sp.ImmutableMatrix(rows), rows=kinds, invalid=None)
    ex.eps = draw(st.sampled_from([0, 0, "1e-5", sp.Rational(1, 10)]))
    ex.gamma = matrix(draw, 1, D) if draw(st.booleans()) else None
    ex.beta = matrix(draw, 1, D) if kind == "layer" and draw(st.booleans()) else None
    ex.G = upstream_for(draw, (T, D))[0]
    if draw(st.integers(0, 9)) == 9:
        what = draw(st.sampled_from(["negative ε", "float ε", "infinite ε", "γ of the wrong shape"]))
        if what == "γ of the wrong shape":
            ex.gamma = matrix(draw, D, 1) if D > 1 else matrix(draw, 1, 2)
            name = "LayerNorm LN" if kind == "layer" else "RMSNorm RMS"
            ex.invalid = Invalid(what, ShapeError,
                                 rf"{name}: γ is {ex.gamma.shape[0]}×{ex.gamma.shape[1]} but must be 1×{D}")
        else:
            ex.eps = {"negative ε": "-1e-5", "float ε": 1e-5, "infinite ε": sp.oo}[what]
            ex.invalid = Invalid(what, ConventionError,
                                 r"ε must be a finite number ≥ 0|float 1e-05, which is not exact")
    elif ex.eps == 0:
        dead = [t for t, r in enumerate(rows) if (len(set(r)) == 1 if kind == "layer" else all(v == 0 for v in r))]
        if dead:
            what = "constant" if kind == "layer" else "all zeros"
            ex.invalid = Invalid(f"a row that is {what} with ε = 0", EvaluationError,
                                 rf"row .* at entry \[{dead[0]}, 0\].*is {what} .*ε = 0.*ε > 0")
    return ex


def check_norm(ex):
    L = Ledger(ex.kind)
    X = L.input("X", ex.X)
    gamma = L.parameter("gamma", ex.gamma) if ex.gamma is not None else None
    beta = L.parameter("beta", ex.beta) if ex.beta is not None else None
    if ex.kind == "layer":
        n = blocks.layer_norm(L, X, gamma, beta, eps=ex.eps, name="LN")
    else:
        n = blocks.rms_norm(L, X, gamma, eps=ex.eps, name="RMS")
    Gh = L.input("Ḡ", ex.G)
    L.define("ℓ", ops.Sum(Gh * n.out, None))
    leaves = ["X"] + [p for p, v in (("gamma", gamma), ("beta", beta)) if v is not None]
    grads = L.backward("ℓ", wrt=leaves)
    names = [n.out.name] + [grads.name(p) for p in leaves]
    if ex.invalid is not None:  # every backend must refuse: the exact one too
        for backend in ("numpy", "torch", "mpmath", "exact"):
            try:
                evaluate(L, backend, targets=[n.out.name])
            except EvaluationError as e:
                last = e
                continue
            raise Disagreement(f"{backend} accepted: {ex.invalid.why}")
        raise last
    eps = mp_value(exact(ex.eps))
    G = mp_rows(ex.G)
    gamma_mp = mp_rows(ex.gamma) if ex.gamma is not None else None
    beta_mp = mp_rows(ex.beta) if ex.beta is not None else None
    Y, dX, dg, db, cond, smallest = mp_norm(ex.kind, mp_rows(ex.X), gamma_mp, beta_mp, eps, G)
    ref = dict(zip(names, [Y, dX] + [v for v, p in ((dg, gamma), (db, beta)) if p is not None]))
    # the mpmath backend at 50 digits against the 60-digit reference, to its conditioning
    got = evaluate(L, "mpmath", dps=50, targets=names)
    rel = float(REF.mpf(10) ** -44 * (1 + cond))
    for name in names:
        size = norm_scale(ex, np.array([[float(v) for v in row] for row in ref[name]]), smallest)
        close_mp(f"mpmath {name}", got[name], ref[name], rel=max(rel, 1e-40), size=size)
    # the float backends against the reference at the float64 inputs, to their conditioning
    at_floats = mp_norm(ex.kind, mp_rows(ex.X, rounded=True), gamma_mp and mp_rows(ex.gamma, rounded=True),
                        beta_mp and mp_rows(ex.beta, rounded=True), mp_value(exact(ex.eps), rounded=True),
                        mp_rows(ex.G, rounded=True))
    notes = []
    for backend in ("numpy", "torch"):
        try:
            vals = evaluate(L, backend, targets=names)
        except EvaluationError as e:
            Xf = f64(ex.X)
            spread = [np.all(r == r[0]) if ex.kind == "layer" else np.mean(r * r) == 0 for r in Xf]
            at = re.search(r"at entry \[(\d+), \d+\]", str(e))
            if exact(ex.eps) == 0 and at and spread[int(at.group(1))] and "after rounding to float64" in str(e):
                what = "a constant" if ex.kind == "layer" else "zeros"
                notes.append(f"correct: the float backends refused a row that float64 rounds to {what}; "
                             f"mpmath decided")
                continue
            raise
        if at_floats is None:
            raise Disagreement(f"{backend} gave {vals[n.out.name]} for a row whose float64 values are constant")
        Yf, dXf, dgf, dbf, cond_f, smallest_f = at_floats
        reff = dict(zip(names, [Yf, dXf] + [v for v, p in ((dgf, gamma), (dbf, beta)) if p is not None]))
        for name in names:
            r = np.array([[float(v) for v in row] for row in reff[name]])
            size = norm_scale(ex, r, smallest_f)
            tol = 64 * ex.D * ex.T * U * (float(cond_f) + 1) * size
            if tol > 0.01 * size:
                notes.append(f"correct: float64 cannot decide (|x|/σ ≈ 10^{math.floor(math.log10(cond_f))}); "
                             f"mpmath decided")
                break
            close(f"{backend} {name}", vals[name], r, atol=tol)
    # torch.nn.functional on well-conditioned rows: the same numbers as the float backends
    if at_floats is not None and float(at_floats[4]) < 1e6 and not notes:
        Xt = t64(f64(ex.X))
        gt = t64(ex.gamma) if ex.gamma is not None else None
        bt = t64(ex.beta) if ex.beta is not None else None
        e = float(exact(ex.eps))
        flat = [t.reshape(-1) if t is not None else None for t in (gt, bt)]
        y = (F.layer_norm(Xt, (ex.D,), *flat, eps=e) if ex.kind == "layer"
             else F.rms_norm(Xt, (ex.D,), flat[0], eps=e))
        (y * t64(ex.G, grad=False)).sum().backward()
        vals = evaluate(L, "numpy", targets=names)
        refs = [y.detach(), Xt.grad] + [t.grad for t in (gt, bt) if t is not None]
        for name, r in zip(names, refs):
            size = norm_scale(ex, r, at_floats[5])
            close(f"numpy {name} against torch", vals[name], r, atol=1e-9 * size * (1 + float(at_floats[4])))
    return "; ".join(sorted(set(notes)))


def test_layer_norm(record_property, examples):
    run_block("norms: layer_norm", norm_examples("layer"), check_norm, record_property, examples)


def test_rms_norm(record_property, examples):
    run_block("norms: rms_norm", norm_examples("rms"), check_norm, record_property, examples)


# ---------------------------------------------------------------------------
# losses: cross-entropy (huge logits), masked cross-entropy (one sequence, a batch), squared error
# ---------------------------------------------------------------------------

HUGE = (10 ** 16, -10 ** 16, 3 * 10 ** 17, -(3 * 10 ** 17))


def logit(draw, huge: bool):
    """A logit: a handout-like number, or (when ``huge``) often ±10¹⁶ or ±3·10¹⁷ plus a small part."""
    r = draw(rationals().strategy)
    if huge and draw(st.booleans()):
        return sp.Integer(draw(st.sampled_from(HUGE))) + (r if draw(st.booleans()) else 0)
    return r


def logits(draw, T: int, V: int) -> sp.ImmutableMatrix:
    huge = draw(st.booleans())
    return sp.ImmutableMatrix(T, V, [logit(draw, huge) for _ in range(T * V)])


def mp_cross_entropy(Z, rows: list, targets: list, reduction: str):
    """(loss, ∂loss/∂Z) in mpmath: ℓ = log Σ_j e^{z_j − z_c} per scored row, its mean or sum;
    ∂loss/∂z_t = w (softmax(z_t) − onehot(c_t)) summed over the scored rows, w = 1/N or 1."""
    n, V = len(rows), len(Z[0])
    w = REF.mpf(1) / n if reduction == "mean" else REF.mpf(1)
    total, grad = REF.mpf(0), [[REF.mpf(0)] * V for _ in Z]
    for t, c in zip(rows, targets):
        z = Z[t]
        m = max(z)
        lse = m + REF.log(REF.fsum(REF.exp(zj - m) for zj in z))
        total += lse - z[c]  # exact to 60 digits: the inputs are exact and |z| ≤ 10¹⁸
        for j in range(V):
            grad[t][j] += w * (REF.exp(z[j] - lse) - (1 if j == c else 0))
    return total * w, grad


def ce_tolerances(Zf: np.ndarray, rows: list, targets: list) -> float:
    """float64 error of the stable loss: a few units of roundoff of the shifted logits z_j − z_c that matter."""
    s = max(float(np.max(np.abs(Zf[t] - Zf[t, c]))) for t, c in zip(rows, targets)) if rows else 0.0
    return 64 * U * (s + 1)


def check_losses_against(L, loss: str, Zs: list, rows_of: list, targets: list, reduction: str, *, torch_ref):
    """A cross-entropy ledger against mpmath (exact and float64 inputs) and torch; ``Zs`` are the logit leaves."""
    grads = L.backward(loss, wrt=[n for n, _ in Zs])
    off_path = [n for n, _ in Zs if n not in grads]  # logits with no scored row: their gradient is zero
    stacked = [row for _, Z in Zs for row in mp_rows(Z)]
    stacked_f = [row for _, Z in Zs for row in mp_rows(Z, rounded=True)]
    Zf = np.vstack([f64(Z) for _, Z in Zs])
    want, dZ = mp_cross_entropy(stacked, rows_of, targets, reduction)
    names = [loss] + [grads.name(n) for n, _ in Zs if n in grads]
    offsets = np.cumsum([0] + [Z.shape[0] for _, Z in Zs])

    def split(g):
        return [[row for row in g[offsets[k]:offsets[k + 1]]] for k in range(len(Zs))]

    got = evaluate(L, "mpmath", dps=50, targets=names)
    size = scale_of(Zf) + float(abs(want))  # 50 digits of a logit 3·10¹⁷ + 0.2 are 10⁻³³ of it
    close_mp("mpmath loss", got[loss], want, rel=1e-46, size=size)
    for (n, _), g in zip(Zs, split(dZ)):
        if n in off_path:
            close_mp(f"the reference ∂loss/∂{n}", g, [[0] * len(g[0])] * len(g))
            continue
        close_mp(f"mpmath ∂loss/∂{n}", got[grads.name(n)], g, rel=1e-46, size=size)
    want_f, dZ_f = mp_cross_entropy(stacked_f, rows_of, targets, reduction)
    tol = ce_tolerances(Zf, rows_of, targets)
    for backend in ("numpy", "torch"):
        vals = evaluate(L, backend, targets=names)
        close(f"{backend} loss", vals[loss], float(want_f), atol=tol * (1 + float(abs(want_f))))
        for (n, _), g in zip(Zs, split(dZ_f)):
            if n in off_path:
                continue
            close(f"{backend} ∂loss/∂{n}", vals[grads.name(n)], np.array([[float(v) for v in r] for r in g]),
                  atol=1e-12)
    # torch.nn.functional.cross_entropy at the same float64 inputs (log_softmax: |error| ≲ u·max|z|)
    leaves = [t64(f64(Z)) for _, Z in Zs]
    ref = torch_ref(leaves)
    ref.backward()
    vals = evaluate(L, "numpy", targets=names)
    close("numpy loss against torch", vals[loss], ref.detach(), atol=64 * U * (scale_of(Zf) + 1))
    for (n, _), leaf in zip(Zs, leaves):
        if n in off_path:
            close(f"torch's ∂loss/∂{n}", np.zeros(leaf.shape), leaf.grad, atol=0.0)
            continue
        close(f"numpy ∂loss/∂{n} against torch", vals[grads.name(n)], leaf.grad, atol=1e-12)


BAD_TARGETS = {"a class past the vocabulary": "V", "a negative class": -1, "a float class": 0.7,
               "a float class with an integer value": 1.0, "a bool class": True, "a text class": "1"}


@st.composite
def ce_examples(draw):
    T, V = distinct_sizes(draw, 2)
    ex = Ex(T=T, V=V, Z=logits(draw, T, V), reduction=draw(st.sampled_from(["mean", "sum"])), invalid=None)
    if draw(st.booleans()):
        ex.positions = None
        rows = list(range(T))
    else:
        rows = draw(st.lists(st.integers(0, T - 1), min_size=1, max_size=T + 1))
        ex.positions = rows
    ex.rows = rows
    ex.targets = [draw(st.integers(0, V - 1)) for _ in rows]
    if draw(st.integers(0, 4)) == 4:
        what = draw(st.sampled_from(list(BAD_TARGETS) + ["a position past the rows", "a negative position",
                                                         "a target too few", "no scored position",
                                                         "an unknown reduction"]))
        k = draw(st.integers(0, len(rows) - 1))
        if what in BAD_TARGETS:
            bad = V if BAD_TARGETS[what] == "V" else BAD_TARGETS[what]
            ex.targets = ex.targets[:k] + [bad] + ex.targets[k + 1:]
            if what in ("a class past the vocabulary", "a negative class"):
                ex.invalid = Invalid(what, ShapeError, rf"targets \[{bad}\] are outside 0..{V - 1} \({V} classes\)")
            else:
                ex.invalid = Invalid(what, ShapeError, rf"target .*must be an integer class index .*got {bad!r}")
        elif what in ("a position past the rows", "a negative position"):
            bad = T if what == "a position past the rows" else -1
            ex.positions = ex.rows = rows[:k] + [bad] + rows[k + 1:]
            ex.invalid = Invalid(what, ShapeError, rf"scored positions \[{bad}\] are outside 0..{T - 1}")
        elif what == "a target too few":
            ex.targets = ex.targets[:-1]
            ex.invalid = Invalid(what, ShapeError, rf"{len(rows) - 1} targets for {len(rows)} scored positions")
        elif what == "no scored position":
            ex.positions, ex.targets = [], []
            ex.invalid = Invalid(what, ShapeError, r"no scored position")
        else:
            ex.reduction = "batchmean"
            ex.invalid = Invalid(what, ConventionError, r"unknown reduction 'batchmean'; use 'mean' or 'sum'")
    return ex


def check_ce(ex):
    L = Ledger("cross-entropy")
    Z = L.input("Z", ex.Z)
    blocks.cross_entropy(L, Z, ex.targets, positions=ex.positions, reduction=ex.reduction)
    if ex.invalid is not None:
        evaluate(L, "numpy")
        return None

    def torch_ref(leaves):
        return F.cross_entropy(leaves[0][ex.rows], torch.tensor(ex.targets), reduction=ex.reduction)

    check_losses_against(L, "loss", [("Z", ex.Z)], ex.rows, ex.targets, ex.reduction, torch_ref=torch_ref)


def test_cross_entropy(record_property, examples):
    run_block("losses: cross_entropy", ce_examples(), check_ce, record_property, examples)


@st.composite
def masked_ce_examples(draw):
    C = draw(st.integers(1, 5))
    batch = draw(st.booleans())
    lengths = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(2, 3)) if batch else 1)]
    ex = Ex(C=C, batch=batch, invalid=None, Z=[logits(draw, Tb, C) for Tb in lengths])
    ex.targets = [[draw(st.one_of(st.none(), st.integers(0, C - 1))) for _ in range(Tb)] for Tb in lengths]
    for ts in ex.targets:  # mostly, some target is valid
        if draw(st.integers(0, 3)) > 0 and all(t is None for t in ts):
            ts[draw(st.integers(0, len(ts) - 1))] = draw(st.integers(0, C - 1))
    ex.valid = None
    if draw(st.booleans()):  # validity given explicitly, in some form
        flags = [np.array([t is not None for t in ts]) for ts in ex.targets]
        ex.valid = [draw(st.sampled_from([f.astype(int).tolist(), f, Mask.exclude(~f)])) for f in flags]
    roll = draw(st.integers(0, 5))
    if roll == 5:
        what = draw(st.sampled_from(["a valid row without a target", "a target too many", "a class past the classes",
                                     "a float class"]))
        b = draw(st.integers(0, len(lengths) - 1))
        t = draw(st.integers(0, lengths[b] - 1))
        if what == "a valid row without a target":
            ex.targets[b][t] = None
            ex.valid = [np.ones(Tb, dtype=int).tolist() for Tb in lengths]
            ex.invalid = Invalid(what, ShapeError, r"rows \[.*\] are marked valid but have no target")
        elif what == "a target too many":
            ex.targets[b].append(0)
            ex.valid = None
            ex.invalid = Invalid(what, ShapeError, rf"{lengths[b] + 1} targets for {lengths[b]} rows of logits")
        else:
            bad = C if what == "a class past the classes" else 0.5
            ex.targets[b][t] = bad
            if ex.valid is not None:
                ex.valid = [np.array([x is not None for x in ts]).astype(int).tolist() for ts in ex.targets]
            ex.invalid = (Invalid(what, ShapeError, rf"targets \[{C}\] are outside 0..{C - 1}") if bad == C
                          else Invalid(what, ShapeError, r"target must be an integer; got 0.5"))
    if ex.invalid is None and all(t is None for ts in ex.targets for t in ts):
        ex.invalid = Invalid("no valid target", MaskError, r"no target is valid \(Σ v_t = 0\)")
    return ex


def check_masked_ce(ex):
    L = Ledger("masked cross-entropy")
    Zs = [L.input(f"Z_{b}", Z) for b, Z in enumerate(ex.Z)]
    if ex.batch:
        blocks.masked_cross_entropy(L, Zs, ex.targets, ex.valid)
    else:
        blocks.masked_cross_entropy(L, Zs[0], ex.targets[0], None if ex.valid is None else ex.valid[0])
    if ex.invalid is not None:
        evaluate(L, "numpy")
        return None
    offsets = np.cumsum([0] + [Z.shape[0] for Z in ex.Z])
    rows = [int(offsets[b]) + t for b, ts in enumerate(ex.targets) for t, c in enumerate(ts) if c is not None]
    targets = [c for ts in ex.targets for c in ts if c is not None]

    def torch_ref(leaves):
        Z = torch.cat(leaves, dim=0)
        y = torch.tensor([-100 if c is None else c for ts in ex.targets for c in ts])
        return F.cross_entropy(Z, y, ignore_index=-100)  # the mean over the valid targets

    check_losses_against(L, "loss", [(f"Z_{b}", Z) for b, Z in enumerate(ex.Z)], rows, targets, "mean",
                         torch_ref=torch_ref)
    return "correct: a batch" if ex.batch else "correct: one sequence"


def test_masked_cross_entropy(record_property, examples):
    run_block("losses: masked_cross_entropy", masked_ce_examples(), check_masked_ce, record_property, examples)


@st.composite
def squared_error_examples(draw):
    T, B, Hd, C = distinct_sizes(draw, 4)
    ex = Ex(T=T, B=B, H=Hd, C=C, invalid=None, states=[matrix(draw, B, Hd) for _ in range(T)], W_o=matrix(draw, C, Hd))
    ex.b_o = matrix(draw, 1, C) if draw(st.booleans()) else None
    ex.positions = draw(st.one_of(st.sampled_from(["final", "all"]),
                                  st.lists(st.integers(0, T - 1), min_size=1, max_size=T, unique=True)))
    scored = [T - 1] if ex.positions == "final" else list(range(T)) if ex.positions == "all" else ex.positions
    ex.scored = scored
    ex.targets = [matrix(draw, B, C) for _ in scored]
    ex.over_positions, ex.over_batch = draw(st.sampled_from(["sum", "mean"])), draw(st.sampled_from(["sum", "mean"]))
    if draw(st.integers(0, 3)) == 3:
        what = draw(st.sampled_from(["W_o of the wrong width", "b_o of the wrong width", "a position past the end",
                                     "a float position", "an unknown position rule", "an unknown reduction",
                                     "a target of the wrong shape"]))
        if what == "W_o of the wrong width":
            ex.W_o = matrix(draw, C, Hd + 1)
            ex.invalid = Invalid(what, ShapeError, rf"W_o must be C×{Hd}")
        elif what == "b_o of the wrong width":
            ex.b_o = matrix(draw, 1, C + 1)
            ex.invalid = Invalid(what, ShapeError, rf"b_o is 1×{C + 1} but must be 1×{C}")
        elif what == "a position past the end":
            ex.positions = [T]
            ex.invalid = Invalid(what, ShapeError, rf"must be a nonempty list of time steps in 0..{T - 1}")
        elif what == "a float position":
            ex.positions = [T - 1 + 0.5]
            ex.invalid = Invalid(what, ShapeError, rf"a time step must be an integer in 0..{T - 1}; got {T - 1 + 0.5}")
        elif what == "an unknown position rule":
            ex.positions = "last"
            ex.invalid = Invalid(what, ConventionError, r"unknown positions 'last'; use 'final', 'all'")
        elif what == "an unknown reduction":
            ex.over_batch = "avg"
            ex.invalid = Invalid(what, ConventionError, r"unknown reduction over the batch 'avg'")
        else:
            ex.targets[0] = matrix(draw, B, C + 1)
            ex.invalid = Invalid(what, ShapeError, rf"the prediction is {B}×{C} but its target is {B}×{C + 1}")
    return ex


def check_squared_error(ex):
    L = Ledger("squared error")
    hs = [L.input(f"h_{t}", h) for t, h in enumerate(ex.states)]
    W_o = L.parameter("W_o", ex.W_o)
    b_o = L.parameter("b_o", ex.b_o) if ex.b_o is not None else None
    head = blocks.regression_head(L, hs, W_o, b_o, positions=ex.positions)
    ys = [L.input(f"y_{t}", y) for t, y in zip(ex.scored, ex.targets)]
    se = blocks.squared_error(L, head, ys, positions=ex.over_positions, batch=ex.over_batch)
    if ex.invalid is not None:
        evaluate(L, "numpy")
        return None
    grads = L.backward(se.name)
    T = {it.name: t64(it.value) for it in L.leaves}
    s = ((1.0 / len(ex.scored) if ex.over_positions == "mean" else 1.0)
         * (1.0 / ex.B if ex.over_batch == "mean" else 1.0))
    total = 0
    for t in ex.scored:
        yhat = F.linear(T[f"h_{t}"], T["W_o"], T["b_o"].reshape(-1) if ex.b_o is not None else None)
        total = total + 0.5 * F.mse_loss(yhat, T[f"y_{t}"], reduction="sum")
    ref = s * total
    ref.backward()
    for backend in ("numpy", "torch"):
        vals = evaluate(L, backend)
        close(f"{backend} {se.name}", vals[se.name], ref.detach(), atol=1e-12 * scale_of(ref.detach()))
        for n, leaf in T.items():
            g = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            if n in grads:
                close(f"{backend} ∂/∂{n}", vals[grads.name(n)], g, atol=1e-12 * scale_of(g))
            elif float(g.abs().max()) != 0:
                raise Disagreement(f"{n} has no adjoint row but torch's gradient is {g}")


def test_squared_error(record_property, examples):
    run_block("losses: regression_head + squared_error", squared_error_examples(), check_squared_error,
              record_property, examples)


# ---------------------------------------------------------------------------
# recurrent cells: rnn, gru, lstm with torch's parameter names, against nn.RNN, nn.GRU, nn.LSTM
# ---------------------------------------------------------------------------

CELL_GATES = {"rnn": 1, "gru": 3, "lstm": 4}
BAD_WIDTHS = {"zero": 0, "negative": -2, "float": 2.0, "bool": True}


def small(draw):
    """Weights and inputs of a cell: a tenth of the handout-like numbers, so the gates are not all saturated."""
    return rationals(-20, 20, (10, 20, 40, 100))


@st.composite
def cell_examples(draw, kind: str):
    T, B, D, Hd = distinct_sizes(draw, 4, 1, 4)
    G = CELL_GATES[kind]
    ex = Ex(kind=kind, T=T, B=B, D=D, H=Hd, invalid=None, bias=draw(st.booleans()), widths=(D, Hd),
            phi=draw(st.sampled_from(["tanh", "relu"])) if kind == "rnn" else None,
            variant=draw(st.sampled_from(["torch", "cho2014"])) if kind == "gru" else None)
    el = small(draw)
    ex.values = {"weight_ih_l0": matrix(draw, G * Hd, D, el), "weight_hh_l0": matrix(draw, G * Hd, Hd, el)}
    if ex.bias:
        ex.values.update({"bias_ih_l0": matrix(draw, 1, G * Hd, el), "bias_hh_l0": matrix(draw, 1, G * Hd, el)})
    ex.matrix_input = B == 1 and draw(st.booleans())  # one T×D matrix whose rows are positions
    ex.xs = [matrix(draw, B, D, el) for _ in range(T)]
    ex.h0 = matrix(draw, B, Hd, el) if draw(st.booleans()) else None
    ex.c0 = matrix(draw, B, Hd, el) if kind == "lstm" and draw(st.booleans()) else None
    ex.G = upstream_for(draw, *[(B, Hd)] * T)
    if draw(st.integers(0, 4)) == 4:
        what = draw(st.sampled_from(["a bad width", "an input of the wrong width", "a wrong initial state",
                                     "an empty sequence"] +
                                    {"rnn": ["an unknown activation"], "gru": ["an unknown variant"],
                                     "lstm": ["a wrong initial cell state"]}[kind]))
        if what == "a bad width":
            which, bad = draw(st.integers(0, 1)), draw(st.sampled_from(list(BAD_WIDTHS)))
            ex.widths = (BAD_WIDTHS[bad], Hd) if which == 0 else (D, BAD_WIDTHS[bad])
            label = "input width D" if which == 0 else "hidden width H"
            ex.invalid = Invalid(f"a {bad} {label}", ShapeError, rf"the {label} must be a positive integer")
        elif what == "an input of the wrong width":
            ex.xs = [matrix(draw, B, D + 1, el) for _ in range(T)]
            ex.matrix_input = False
            ex.invalid = Invalid(what, ShapeError, rf"x_t is {B}×{D + 1}, .* must be H×D = H×{D + 1}")
        elif what == "an empty sequence":
            ex.xs, ex.matrix_input = [], False
            ex.invalid = Invalid(what, ShapeError, r"an empty sequence has no positions: T must be at least 1")
        elif what == "a wrong initial state":
            ex.h0 = matrix(draw, B, Hd + 1, el)
            ex.invalid = Invalid(what, ShapeError, rf"initial state is {B}×{Hd + 1} but must be {B}×{Hd}")
        elif what == "a wrong initial cell state":
            ex.c0 = matrix(draw, B + 1, Hd, el)
            ex.invalid = Invalid(what, ShapeError, rf"c_{{-1}} is {B + 1}×{Hd} but must be {B}×{Hd}")
        elif what == "an unknown activation":
            ex.phi = "gelu"
            ex.invalid = Invalid(what, ConventionError, r"unknown activation 'gelu'; use one of tanh, relu")
        else:
            ex.variant = "keras"
            ex.invalid = Invalid(what, ConventionError, r"unknown GRU variant 'keras'; valid variants are")
    return ex


def cho2014(x, h, W_ih, W_hh, b_ih, b_hh):
    """One step of the GRU of Cho et al. (2014), eqs. (5)–(8): the reset gate applied to h before W_hn."""
    Wr, Wu, Wn = W_ih.chunk(3, 0)
    Ur, Uu, Un = W_hh.chunk(3, 0)
    br, bu, bn = b_ih.chunk(3, -1) if b_ih is not None else (0, 0, 0)
    cr, cu, cn = b_hh.chunk(3, -1) if b_hh is not None else (0, 0, 0)
    r = torch.sigmoid(x @ Wr.T + br + h @ Ur.T + cr)
    u = torch.sigmoid(x @ Wu.T + bu + h @ Uu.T + cu)
    n = torch.tanh(x @ Wn.T + bn + (r * h) @ Un.T + cn)
    return u * h + (1 - u) * n


def cell_reference(ex, T):
    """Every h_t (B×H) from torch: nn.RNN / nn.GRU / nn.LSTM run with the ledger's leaves, or Cho et al.'s GRU."""
    x = torch.stack([T[f"x_{t}"] for t in range(ex.T)], dim=1) if not ex.matrix_input else T["X"][None]  # (B, T, D)
    h0 = T["h_init"] if ex.h0 is not None else torch.zeros(ex.B, ex.H, dtype=torch.float64)
    params = {n: (T[n].reshape(-1) if n.startswith("bias") else T[n]) for n in ex.values}
    if ex.kind == "gru" and ex.variant == "cho2014":
        hs, h = [], h0
        for t in range(ex.T):
            h = cho2014(x[:, t], h, params["weight_ih_l0"], params["weight_hh_l0"], params.get("bias_ih_l0"),
                        params.get("bias_hh_l0"))
            hs.append(h)
        return hs
    cls = {"rnn": torch.nn.RNN, "gru": torch.nn.GRU, "lstm": torch.nn.LSTM}[ex.kind]
    kw = {"nonlinearity": ex.phi} if ex.kind == "rnn" else {}
    module = cls(ex.D, ex.H, bias=ex.bias, batch_first=True, dtype=torch.float64, **kw)
    state = h0[None]
    if ex.kind == "lstm":
        c0 = T["c_init"] if ex.c0 is not None else torch.zeros(ex.B, ex.H, dtype=torch.float64)
        state = (state, c0[None])
    out, _ = torch.func.functional_call(module, params, (x, state))
    return [out[:, t] for t in range(ex.T)]


def check_cell(ex):
    L = Ledger(ex.kind)
    make = {"rnn": blocks.rnn_parameters, "gru": blocks.gru_parameters, "lstm": blocks.lstm_parameters}[ex.kind]
    p = make(L, *ex.widths, bias=ex.bias, values=ex.values)
    if ex.matrix_input:
        xs = L.input("X", sp.Matrix.vstack(*ex.xs))
    else:
        xs = [L.input(f"x_{t}", x) for t, x in enumerate(ex.xs)]
    h0 = L.input("h_init", ex.h0) if ex.h0 is not None else None
    if ex.kind == "rnn":
        run = blocks.rnn(L, xs, p.W_x, p.W_h, p.b, phi=ex.phi, h_init=h0)
    elif ex.kind == "gru":
        run = blocks.gru(L, xs, p, variant=ex.variant, h_init=h0)
    else:
        c0 = L.input("c_init", ex.c0) if ex.c0 is not None else None
        run = blocks.lstm(L, xs, p, h_init=h0, c_init=c0)
    against_torch(L, [h.name for h in run.h], ex.G, lambda T: cell_reference(ex, T), invalid=ex.invalid)
    return None


def test_rnn(record_property, examples):
    run_block("cells: rnn (nn.RNN's parameters)", cell_examples("rnn"), check_cell, record_property, examples)


def test_gru(record_property, examples):
    run_block("cells: gru (nn.GRU's parameters; Cho et al.)", cell_examples("gru"), check_cell, record_property, examples)


def test_lstm(record_property, examples):
    run_block("cells: lstm (nn.LSTM's parameters)", cell_examples("lstm"), check_cell, record_property, examples)


# ---------------------------------------------------------------------------
# pooling: masked_mean_pool, one sequence and a batch
# ---------------------------------------------------------------------------


@st.composite
def pool_examples(draw):
    T, D, B = distinct_sizes(draw, 3)
    batch = draw(st.booleans())
    ex = Ex(T=T, D=D, B=B if batch else 1, batch=batch, invalid=None)
    ex.H = [matrix(draw, T, D) for _ in range(ex.B)]
    m = mostly_valid(draw, bool_matrix(draw, ex.B, T))
    ex.m = m
    ex.given = validity_form(draw, m if batch else m[0])
    ex.G = upstream_for(draw, (ex.B, D))
    empty = [b for b in range(ex.B) if not m[b].any()]
    if draw(st.integers(0, 5)) == 5:
        what = draw(st.sampled_from(["a mask of the wrong length", "inputs of different shapes", "no input",
                                     "a vector mask for a batch"]))
        if what == "a mask of the wrong length":
            ex.given = np.ones((ex.B, T + 1), dtype=bool) if batch else [1] * (T + 1)
            ex.invalid = Invalid(what, ShapeError, rf"pooling mask has (shape {ex.B}×{T + 1}|{T + 1} entries) "
                                                   rf"but (the batch is B×T = {ex.B}×{T}|there are {T} positions)")
        elif what == "inputs of different shapes" and ex.B > 1:
            ex.H[-1] = matrix(draw, T, D + 1)
            ex.invalid = Invalid(what, ShapeError, r"batched pooling needs B inputs of the same shape T×D")
        elif what == "no input":
            ex.H, ex.batch = [], True
            ex.invalid = Invalid(what, ShapeError, r"batched pooling needs at least one input")
        elif batch:
            ex.given = [1] * T
            ex.invalid = Invalid(what, ShapeError, r"one row per batch item, one entry per position")
    if ex.invalid is None and empty:
        says = rf"batch item {empty[0]} marks no position" if batch else r"pooling mask marks no position as valid"
        ex.invalid = Invalid("a sequence with no valid position", MaskError, says)
    return ex


def check_pool(ex):
    L = Ledger("pooling")
    Hs = [L.input(f"H_{b}", H) for b, H in enumerate(ex.H)]
    out = blocks.masked_mean_pool(L, Hs if ex.batch else Hs[0], ex.given)

    def reference(T):
        m = torch.tensor(ex.m, dtype=torch.float64)  # B×T
        X = torch.stack([T[f"H_{b}"] for b in range(ex.B)])  # (B, T, D)
        return [(m[:, :, None] * X).sum(dim=1) / m.sum(dim=1, keepdim=True)]

    against_torch(L, [out.name], ex.G, reference, invalid=ex.invalid)
    return "correct: a batch" if ex.batch else "correct: one sequence"


def test_masked_mean_pool(record_property, examples):
    run_block("pooling: masked_mean_pool", pool_examples(), check_pool, record_property, examples)


# ---------------------------------------------------------------------------
# positions: sinusoidal (positions), learned_positions, add_positions
# ---------------------------------------------------------------------------

BASES = (10000, 100, 2, sp.Rational(3, 2), 10 ** 6, "10000")


@st.composite
def positions_examples(draw):
    T, D = distinct_sizes(draw, 2)
    ex = Ex(T=T, D=D, base=draw(st.sampled_from(BASES)), invalid=None, sizes=[size(draw, T), size(draw, D)])
    ex.G = upstream_for(draw, (T, D))
    if draw(st.integers(0, 4)) == 4:
        what = draw(st.sampled_from(["a bad size", "a base of 1", "a negative base", "a float base",
                                     "an infinite base", "a text base"]))
        if what == "a bad size":
            which, bad = draw(st.integers(0, 1)), draw(st.sampled_from(list(BAD_SIZES)))
            ex.sizes[which] = BAD_SIZES[bad]
            label = "T \\(the number of positions\\)" if which == 0 else "D \\(the model width\\)"
            ex.invalid = Invalid(f"a {bad} size", ShapeError, label + r" must be a positive integer; got")
        elif what == "a float base":
            ex.base = 10000.0
            ex.invalid = Invalid(what, ConventionError, r"positional base: got the float 10000.0, which is not exact")
        elif what == "a text base":
            ex.base = "ten thousand"
            ex.invalid = Invalid(what, ConventionError, r"positional base: cannot read 'ten thousand' as a number")
        else:
            ex.base = {"a base of 1": 1, "a negative base": -2, "an infinite base": sp.oo}[what]
            ex.invalid = Invalid(what, ConventionError, r"positional base must be a finite number greater than 1")
    return ex


def check_positions(ex):
    L = Ledger("sinusoidal positions")
    P = blocks.positions(L, *ex.sizes, base=ex.base)
    if ex.invalid is not None:
        return None
    b = float(exact(ex.base))
    t = torch.arange(ex.T, dtype=torch.float64)[:, None]
    j = torch.arange(ex.D)
    omega = b ** (-2.0 * (j // 2).to(torch.float64) / ex.D)
    ref = torch.where(j % 2 == 0, torch.sin(t * omega), torch.cos(t * omega))
    exact_P = L.value(P.name)
    tt, jj = ex.T - 1, ex.D - 1  # the last entry, exactly as Vaswani et al. §3.5 write it
    want = (sp.sin if jj % 2 == 0 else sp.cos)(tt * exact(ex.base) ** sp.Rational(-2 * (jj // 2), ex.D))
    if sp.simplify(exact_P[tt, jj] - want) != 0:
        raise Disagreement(f"P[{tt}, {jj}] is {exact_P[tt, jj]}, not {want}")
    # the value is the formula above; the gradient reaches the input P unchanged (P is an input, not a function)
    against_torch(L, [P.name], ex.G, lambda T: [ref + (T["P"] - T["P"].detach())], atol=1e-13)


def test_positions(record_property, examples):
    run_block("positions: positions (sinusoidal)", positions_examples(), check_positions, record_property, examples)


@st.composite
def learned_examples(draw):
    T_max, D = distinct_sizes(draw, 2)
    ex = Ex(T_max=T_max, D=D, T=draw(st.integers(1, T_max)), invalid=None, table=matrix(draw, T_max, D))
    ex.given_T = size(draw, ex.T)
    if draw(st.integers(0, 4)) == 4:
        what = draw(st.sampled_from(["a sequence longer than the table", "a bad size"]))
        if what == "a bad size":
            bad = draw(st.sampled_from(list(BAD_SIZES)))
            ex.given_T = BAD_SIZES[bad]
            ex.invalid = Invalid(f"a {bad} length", ShapeError, r"T \(the number of positions\) must be a positive "
                                                                r"integer; got")
        else:
            ex.given_T = ex.T = T_max + 1
            ex.invalid = Invalid(what, ShapeError, rf"the sequence has {T_max + 1} positions but the table has "
                                                   rf"only {T_max} rows")
    ex.G = upstream_for(draw, (ex.T, D))
    return ex


def check_learned(ex):
    L = Ledger("learned positions")
    table = L.parameter("P_table", ex.table)
    P = blocks.learned_positions(L, table, ex.given_T)
    against_torch(L, [P.name], ex.G, lambda T: [T["P_table"][: ex.T]], invalid=ex.invalid)


def test_learned_positions(record_property, examples):
    run_block("positions: learned_positions", learned_examples(), check_learned, record_property, examples)


@st.composite
def add_positions_examples(draw):
    T, D = distinct_sizes(draw, 2)
    ex = Ex(T=T, D=D, invalid=None, E=matrix(draw, T, D),
            kind=draw(st.sampled_from(["sinusoidal", "learned", "given"])))
    ex.P_shape = (T, D)
    if draw(st.integers(0, 4)) == 4:
        ex.P_shape = draw(st.sampled_from([(D, T), (T, D + 1), (T + 1, D)]))
        ex.kind = "given"
        ex.invalid = Invalid("positions of another shape", ShapeError,
                             rf"the embeddings are {T}×{D} but the positions are {ex.P_shape[0]}×{ex.P_shape[1]}")
    ex.table = matrix(draw, ex.P_shape[0] + draw(st.integers(0, 2)), D) if ex.kind == "learned" else None
    ex.P = matrix(draw, *ex.P_shape) if ex.kind == "given" else None
    ex.G = upstream_for(draw, (T, D))
    return ex


def check_add_positions(ex):
    L = Ledger("token plus position")
    E = L.parameter("E_seq", ex.E)
    if ex.kind == "sinusoidal":
        P = blocks.positions(L, ex.T, ex.D)
    elif ex.kind == "learned":
        P = blocks.learned_positions(L, L.parameter("P_table", ex.table), ex.T)
    else:
        P = L.input("P", ex.P)
    H0 = blocks.add_positions(L, E, P)

    def reference(T):
        if ex.kind == "sinusoidal":
            t, j = torch.arange(ex.T, dtype=torch.float64)[:, None], torch.arange(ex.D)
            omega = 10000.0 ** (-2.0 * (j // 2).to(torch.float64) / ex.D)
            return [T["E_seq"] + torch.where(j % 2 == 0, torch.sin(t * omega), torch.cos(t * omega))]
        return [T["E_seq"] + (T["P_table"][: ex.T] if ex.kind == "learned" else T["P"])]

    wrt = ["E_seq"] if ex.kind == "sinusoidal" else None  # the sinusoidal P is a fixed input
    against_torch(L, [H0.name], ex.G, reference, invalid=ex.invalid, atol=1e-13, wrt=wrt)
    return f"correct: {ex.kind} positions"


def test_add_positions(record_property, examples):
    run_block("positions: add_positions", add_positions_examples(), check_add_positions, record_property, examples)


# ---------------------------------------------------------------------------
# the Transformer block: pre- and post-norm, both handouts' row names, masks, optional biases and gains
# ---------------------------------------------------------------------------


@st.composite
def block_examples(draw):
    T, D = distinct_sizes(draw, 2, 2, 5)
    el = rationals(-20, 20, (10, 20, 40))
    orientation = draw(st.sampled_from(["in_out", "out_in"]))
    n_heads, Fw = draw(st.integers(1, 2)), draw(st.integers(1, 4))
    widths = [(draw(st.integers(1, 3)), draw(st.integers(1, 3))) for _ in range(n_heads)]
    ex = Ex(T=T, D=D, F=Fw, widths=widths, orientation=orientation, invalid=None,
            norm=draw(st.sampled_from(["pre", "post"])), names=draw(st.sampled_from(["decoder", "encoder"])),
            eps=draw(st.sampled_from(["1e-5", sp.Rational(1, 10), sp.Rational(1, 1000)])),
            empty_rows=draw(st.sampled_from(["error", "zero"])))
    ex.mask, ex.keep, _ = draw_mask(draw, T, T, forms=("none", "causal", "bool", "exclude", "additive"))
    ex.H = matrix(draw, T, D)
    ex.heads = [tuple(weight(draw, D, w, orientation, el) for w in (dk, dk, dv)) for dk, dv in widths]
    hv = sum(dv for _, dv in widths)
    ex.W_O = weight(draw, hv, D, orientation, el)
    ex.W_1, ex.W_2 = weight(draw, D, Fw, orientation, el), weight(draw, Fw, D, orientation, el)
    ex.b_1 = matrix(draw, 1, Fw, el) if draw(st.booleans()) else None
    ex.b_2 = matrix(draw, 1, D, el) if draw(st.booleans()) else None
    ex.ln = [tuple(matrix(draw, 1, D, el) if draw(st.booleans()) else None for _ in range(2)) for _ in range(2)]
    ex.G = upstream_for(draw, (T, D))
    if draw(st.integers(0, 5)) == 5:
        what = draw(st.sampled_from(["an unknown norm placement", "W_O of the wrong shape", "an MLP of another width",
                                     "γ of the wrong shape"]))
        if what == "an unknown norm placement":
            ex.norm = "sandwich"
            ex.invalid = Invalid(what, ConventionError, r"unknown norm placement 'sandwich'; use 'pre'")
        elif what == "W_O of the wrong shape":
            ex.W_O = weight(draw, hv + 1, D, orientation, el)
            ex.invalid = Invalid(what, ShapeError, rf"output map W_O: X is {T}×{hv} but W is")
        elif what == "an MLP of another width":
            ex.W_2, ex.b_2 = weight(draw, Fw, D + 1, orientation, el), None
            ex.invalid = Invalid(what, ShapeError, rf"H is {T}×{D} but F\(H\) is {T}×{D + 1}; a residual sum needs "
                                                   rf"equal shapes")
        else:
            ex.ln[0] = (matrix(draw, 1, D + 1, el), None)
            ex.invalid = Invalid(what, ShapeError, rf"γ is 1×{D + 1} but must be 1×{D}")
    ex.invalid = no_source(ex)
    return ex


def block_reference(ex, T, *, seen=None, relu_mask=None):
    """The block in torch: F.layer_norm, F.scaled_dot_product_attention per head, the MLP with ReLU.

    ``seen`` receives the MLP's preactivation Z; ``relu_mask`` replaces ReLU(Z) by Z ⊙ mask (the branch that
    the exact sign of Z takes, where float64 rounds an exact 0 to ±10⁻¹⁷)."""
    eps = float(exact(ex.eps))

    def ln(X, k):
        g, b = (T.get(f"ln{k}_{w}") for w in ("gamma", "beta"))
        return F.layer_norm(X, (ex.D,), None if g is None else g.reshape(-1), None if b is None else b.reshape(-1),
                            eps=eps)

    def mha(X):
        outs = []
        for i, (dk, _) in enumerate(ex.widths, start=1):
            Q, K, V = (project_ref(X, T[f"{n}^({i})"], ex.orientation) for n in ("W_Q", "W_K", "W_V"))
            outs.append(attention_reference(Q, K, V, ex.keep, math.sqrt(dk))[0])
        return project_ref(torch.cat(outs, dim=1), T["W_O"], ex.orientation)

    def mlp(X):
        Z = project_ref(X, T["W_1"], ex.orientation) + (T["b_1"] if "b_1" in T else 0)
        if seen is not None:
            seen["Z"] = Z.detach()
        J = torch.relu(Z) if relu_mask is None else Z * relu_mask
        return project_ref(J, T["W_2"], ex.orientation) + (T["b_2"] if "b_2" in T else 0)

    H = T["H_in"]
    if ex.norm == "pre":
        U = H + mha(ln(H, 1))
        return [U + mlp(ln(U, 2))]
    U = ln(H + mha(H), 1)
    return [ln(U + mlp(U), 2)]


def check_block(ex):
    L = Ledger("Transformer block")
    H = L.input("H_in", ex.H)  # the decoder's names call the block's output H
    heads = [tuple(L.parameter(f"{n}^({i})", v) for n, v in zip(("W_Q", "W_K", "W_V"), ws))
             for i, ws in enumerate(ex.heads, start=1)]
    par = {n: (L.parameter(n, getattr(ex, n)) if getattr(ex, n) is not None else None)
           for n in ("W_O", "W_1", "b_1", "W_2", "b_2")}
    ln = [tuple(L.parameter(f"ln{k}_{w}", v) if v is not None else None for w, v in zip(("gamma", "beta"), pair))
          for k, pair in enumerate(ex.ln, start=1)]
    p = blocks.BlockParams(heads, par["W_O"], (par["W_1"], par["b_1"], par["W_2"], par["b_2"]), ln[0], ln[1])
    names = blocks.DECODER_NAMES if ex.names == "decoder" else blocks.ENCODER_NAMES
    blk = blocks.transformer_block(L, H, p, orientation=ex.orientation, eps=ex.eps, mask=made(ex.mask), norm=ex.norm,
                                   names=names, empty_rows=ex.empty_rows)
    if ex.invalid is not None:
        return against_torch(L, [blk.out.name], ex.G, None, invalid=ex.invalid)
    seen = {}
    block_reference(ex, {it.name: t64(it.value, grad=False) for it in L.leaves}, seen=seen)
    Z = seen["Z"]
    if bool((Z.abs() <= 1e-9 * (1 + float(Z.abs().max()))).any()):
        # a ReLU preactivation within float64 rounding of 0: ReLU'(0) = 0 only where Z is exactly 0, which float64
        # cannot tell from ±10⁻¹⁷; the mpmath backend (50 digits) decides, against torch on the branch it takes
        zname = blk.mlp.Z.name
        mask = torch.tensor(as_float(evaluate(L, "mpmath", targets=[zname])[zname]) > 0, dtype=torch.float64)
        against_torch(L, [blk.out.name], ex.G, lambda T: block_reference(ex, T, relu_mask=mask), atol=1e-8,
                      backends=("mpmath",))
        return f"correct: {ex.norm}-norm, a ReLU preactivation within float64 rounding of 0: mpmath decided"
    against_torch(L, [blk.out.name], ex.G, lambda T: block_reference(ex, T), atol=1e-8)
    return f"correct: {ex.norm}-norm"


def test_transformer_block(record_property, examples):
    run_block("transformer: transformer_block", block_examples(), check_block, record_property, examples)


# ---------------------------------------------------------------------------
# regressions: the bugs these properties found, each in its smallest form
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0, sp.oo, -sp.oo, sp.nan, sp.zoo, sp.I])
def test_attention_scale_must_be_a_finite_nonzero_real(scale):
    """A zero divisor gave a late 'row S evaluates to inf'; an infinite one gave uniform weights silently."""
    L = Ledger()
    Q, K, V = L.input("Q", [[1, 2]]), L.input("K", [[1, 0], [0, 1]]), L.input("V", [[1], [3]])
    with pytest.raises(ConventionError, match=r"scale .*finite nonzero .*got .*torch's scale= is its reciprocal"):
        blocks.scaled_dot_product(L, Q, K, V, scale=scale)
    assert len(L) == 3  # no row appended


def test_attention_scale_is_a_divisor_and_may_be_negative_or_symbolic():
    L = Ledger()
    Q, K, V = L.input("Q", [[1, 2]]), L.input("K", [[1, 0], [0, 1]]), L.input("V", [[1], [3]])
    head = blocks.scaled_dot_product(L, Q, K, V, scale=-2)
    assert L.value(head.S.name) == sp.Matrix([[-sp.Rational(1, 2), -1]])
    s = L.input("s")  # a symbolic divisor (a scalar of the ledger) is not judged
    blocks.scaled_dot_product(L, Q, K, V, scale=s, tag="(2)")


def test_a_batch_validity_mask_given_as_a_vector_is_described_as_batch_by_positions():
    """It was 'must be a matrix (queries × sources)', the words of an attention mask."""
    with pytest.raises(ShapeError, match=r"must be a matrix \(one row per batch item, one entry per position\); "
                                         r"got an array of shape \(2,\)"):
        masks.batch_validity([1, 0])
    L = Ledger()
    Hs = [L.input(f"H_{b}", [[1, 2], [3, 4]]) for b in range(2)]
    with pytest.raises(ShapeError, match=r"pooling mask must be a matrix \(one row per batch item"):
        blocks.masked_mean_pool(L, Hs, [1, 1])
    with pytest.raises(ShapeError, match=r"must be a matrix \(queries × sources\)"):  # attention keeps its words
        masks.check([1, 0])


@pytest.mark.parametrize("target", [0.7, 1.0, True, "1"])
def test_cross_entropy_refuses_a_target_that_is_not_an_integer(target):
    """int(0.7) silently scored class 0, and True class 1."""
    L = Ledger()
    Z = L.input("Z", [[1, 2, 3], [3, 4, 5]])
    with pytest.raises(ShapeError, match=rf"a target must be an integer class index in 0..2; got {target!r}"):
        blocks.cross_entropy(L, Z, [0, target])
    with pytest.raises(ShapeError, match=r"targets \[3\] are outside 0..2 \(3 classes\)"):
        blocks.cross_entropy(L, Z, [0, 3])
    assert len(L) == 1  # refused before any row is appended
    blocks.cross_entropy(L, Z, [np.int64(0), 2])  # NumPy integers are integers


@pytest.mark.parametrize("positions, says", [
    ([-1], r"scored positions \[-1\] are outside 0..1 \(Z has 2 rows; a negative position is not read from the end\)"),
    ([2], r"scored positions \[2\] are outside 0..1"),
    ([0.5], r"a scored position must be an integer row index .*got 0.5"),
    ([], r"no scored position"),
])
def test_cross_entropy_refuses_positions_outside_the_rows_and_none(positions, says):
    """−1 silently scored the last row (Python's negative index), and no position was an IndexError."""
    L = Ledger()
    Z = L.input("Z", [[1, 2], [3, 4]])
    with pytest.raises(ShapeError, match=says):
        blocks.cross_entropy(L, Z, [0] * len(positions), positions=positions)
    assert len(L) == 1  # no row appended


def test_masked_cross_entropy_takes_validity_as_a_mask():
    """A Mask (Mask.exclude of a padding mask) was a TypeError: 'Mask' object is not iterable."""
    L = Ledger()
    Z0, Z1 = L.input("Z_0", [[0, 1], [2, 0]]), L.input("Z_1", [[1, 1]])
    one = blocks.masked_cross_entropy(L, Z0, [1, 0], Mask.exclude([False, True]), name="one")
    batch = blocks.masked_cross_entropy(L, [Z0, Z1], [[1, 0], [0]], [Mask.exclude([False, True]), [1]],
                                        name="batch", tag="_b")
    assert abs(sp.N(L.value(one.loss.name) - sp.log(1 + sp.exp(-1)), 50)) < 1e-45  # row 0 only: log(1 + e) − 1
    assert abs(sp.N(L.value(batch.loss.name) - (sp.log(1 + sp.exp(-1)) + sp.log(2)) / 2, 50)) < 1e-45


@pytest.mark.parametrize("positions", [[1.5], [True], ["0"]])
def test_regression_head_refuses_a_time_step_that_is_not_an_integer(positions):
    """int(1.5) silently read the state h_1."""
    L = Ledger()
    hs = [L.input(f"h_{t}", [[1, 2]]) for t in range(3)]
    with pytest.raises(ShapeError, match=r"positions: a time step must be an integer in 0..2; got"):
        blocks.regression_head(L, hs, L.parameter("W_o", [[1, 1]]), positions=positions)


def test_positions_take_numpy_integer_sizes():
    """np.int64(3) (a size read from an array's shape) was refused as 'not a positive integer'; masks took it."""
    L = Ledger()
    P = blocks.positions(L, np.int64(3), np.int64(2))
    assert L.value(P.name) == blocks.sinusoidal_positions(3, 2)
    table = L.parameter("P_table", [[1, 2], [3, 4], [5, 6]])
    Pl = blocks.learned_positions(L, table, np.int64(2), name="P_learned")
    assert L.value(Pl.name) == sp.Matrix([[1, 2], [3, 4]])
    assert blocks.angular_frequencies(np.int64(4))[2] == sp.Rational(1, 100)
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ShapeError, match=r"T \(the number of positions\) must be a positive integer; got"):
            blocks.sinusoidal_positions(bad, 2)


@pytest.mark.parametrize("base", [sp.oo, sp.I, sp.nan, 1, -2, "1/2"])
def test_positions_refuse_a_base_that_is_not_a_finite_number_above_one(base):
    """base = ∞ gave ω = (1, 1, 0, 0, …) silently (sines and cosines of t alone); base = i was a TypeError."""
    with pytest.raises(ConventionError, match=r"the positional base must be a finite number greater than 1 .*; got"):
        blocks.angular_frequencies(4, base=base)
    L = Ledger()
    with pytest.raises(ConventionError, match=r"positional base must be a finite number greater than 1"):
        blocks.positions(L, 2, 4, base=base)


def test_a_mask_of_sympy_booleans_is_read_as_booleans():
    """sp.Integer(j) <= i is SymPy's true: it was refused as 'entry is True; … holds True/False'."""
    causal = [[sp.Integer(j) <= i for j in range(3)] for i in range(3)]
    assert causal[1][0] is sp.S.true
    assert np.array_equal(masks.check(causal), masks.causal(3))
    assert np.array_equal(Mask.exclude([[sp.S.false, sp.S.true]]).allowed, [[True, False]])
    with pytest.raises(MaskError, match=r"Mask.additive takes|additive mask holds 0"):
        Mask.additive([[sp.S.true]])
