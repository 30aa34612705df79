"""Recurrent cells as ledger rows: the Elman RNN (scalar or vector, any φ), the GRU and the LSTM.

Rows are positions in time; within one time step the rows of a matrix are the
examples of a batch, so x_t is B×D and h_t is B×H (B = 1 is the handouts' row
vector 1×D, 1×H). Weights are stored output×input, as torch stores them, and
right-multiplied transposed.

**Elman RNN** (Week 06 handout, 004, "One scalar recurrent model" and
"General forward pass")::

    z_t = x_t W_xᵀ + h_{t−1} W_hᵀ + b          (scalar: z_t = w_x x_t + w_h h_{t−1} + b)
    h_t = φ(z_t)                                 h_{−1} = 0 unless given

where x_t is B×D, W_x is H×D (torch's ``weight_ih_l0``), W_h is H×H
(``weight_hh_l0``), b is 1×H: one bias b_h, or torch's two biases
b_ih + b_hh (``bias_ih_l0``, ``bias_hh_l0``). φ is any SymPy function class
(``sympy.tanh``, :class:`~symseq.functions.sigmoid`, :class:`~symseq.functions.relu`),
an undefined function (``sympy.Function("phi")``, for general formulas), a
one-variable ``Lambda`` (the identity), or one of the names ``"tanh"``,
``"relu"``, ``"sigmoid"``, ``"identity"``.

**GRU**, torch's convention (``torch.nn.GRU``; Week 06 handout, 004, "A GRU
learns how much to retain and how much to write")::

    r_t = σ(x_t W_xrᵀ + b_xr + h_{t−1} W_hrᵀ + b_hr)          reset gate
    u_t = σ(x_t W_xuᵀ + b_xu + h_{t−1} W_huᵀ + b_hu)          update gate (torch's z_t)
    h̃_t = tanh(x_t W_xnᵀ + b_xn + r_t ⊙ (h_{t−1} W_hnᵀ + b_hn))   candidate (torch's n_t)
    h_t = u_t ⊙ h_{t−1} + (1 − u_t) ⊙ h̃_t

``variant="cho2014"`` applies the reset gate before the recurrent product,
h̃_t = tanh(x_t W_xnᵀ + b_xn + (r_t ⊙ h_{t−1}) W_hnᵀ + b_hn), as Cho et al.
(2014), eq. (8); the mixture is the same in both (Cho et al. eq. (7)). Sources
that swap the mixture (h_t = (1 − u_t) ⊙ h_{t−1} + u_t ⊙ h̃_t, e.g. Chung et al.
2014) describe a relabelled gate, not a third variant.

**LSTM**, torch's convention (``torch.nn.LSTM``, no projection, no peepholes)::

    a_t = σ(x_t W_xaᵀ + b_xa + h_{t−1} W_haᵀ + b_ha),  a ∈ {i, f, o}
    c̃_t = tanh(x_t W_xcᵀ + b_xc + h_{t−1} W_hcᵀ + b_hc)         candidate (torch's g_t)
    c_t = f_t ⊙ c_{t−1} + i_t ⊙ c̃_t
    h_t = o_t ⊙ tanh(c_t)

**Packing order** of torch's parameters (``weight_ih_l0`` is G·H×D,
``weight_hh_l0`` G·H×H, the biases G·H vectors, held here as 1×G·H rows),
gate blocks of H rows each, top to bottom:

* ``nn.RNN``:  one block, W_x (the handout's b_h is bias_ih_l0 + bias_hh_l0);
* ``nn.GRU``:  r, u (torch's z), n (the candidate's weights W_xn, W_hn);
* ``nn.LSTM``: i, f, c (torch's g), o.

:func:`gru_parameters` and :func:`lstm_parameters` create these packed leaves
and one row per gate matrix (``W_{xr} := weight_ih_l0[0:H, :]``), so the
gradients of the packed leaves compare directly with a module's ``.grad``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import sympy as sp

from .. import ops
from ..arrays import integer
from ..errors import ConventionError, LedgerError, ShapeError
from ..functions import partial, relu, sigmoid
from ._naming import tagged

GRU_VARIANTS = ("torch", "cho2014")
"""GRU conventions: ``"torch"`` (reset gate after W_hn h + b_hn) and ``"cho2014"`` (reset before W_hn)."""

GRU_GATES = ("r", "u", "n")
"""torch's packing order of a GRU's gate blocks (reset, update = torch's z, candidate = torch's n)."""

LSTM_GATES = ("i", "f", "c", "o")
"""torch's packing order of an LSTM's gate blocks (input, forget, candidate = torch's g, output)."""

_X = sp.Dummy("x", real=True)
IDENTITY = sp.Lambda(_X, _X)
ACTIVATIONS = {"tanh": sp.tanh, "relu": relu, "sigmoid": sigmoid, "identity": IDENTITY}


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


@dataclass
class Recurrence:
    """The rows a recurrent cell appended, by time step.

    ``h[k]`` is the handle of the k-th state (B×H, or a SymPy symbol for the
    scalar RNN), named h_{start + k}; ``z`` the Elman preactivations; ``gates``
    the GRU (``"r"``, ``"u"``, ``"h̃"``) or LSTM (``"i"``, ``"f"``, ``"c̃"``,
    ``"o"``) rows; ``c`` the LSTM cell states. ``h_init``/``c_init`` are the
    given initial states (None: zero). The lists count from 0 whatever the
    page's time origin ``start``.
    """

    kind: str
    x: list
    h: list
    z: list = field(default_factory=list)
    c: list = field(default_factory=list)
    gates: dict = field(default_factory=dict)
    h_init: Any = None
    c_init: Any = None
    phi: Any = None
    params: Any = None
    variant: str = ""
    scalar: bool = False
    start: int = 0  # the time index of the first step as the page numbers it (rows z_{start}, h_{start}, ...)

    @property
    def T(self) -> int:
        return len(self.h)

    @property
    def batch(self) -> int:
        return 1 if self.scalar else self.h[0].shape[0]

    @property
    def width(self) -> int:
        return 1 if self.scalar else self.h[0].shape[1]


@dataclass
class RNNParams:
    """Elman weights: W_x (H×D), W_h (H×H) and the bias, one row b or torch's pair (b_ih, b_hh)."""

    W_x: Any
    W_h: Any
    b: Any = None


@dataclass
class GatedParams:
    """Gate matrices of a GRU or LSTM by gate letter: ``W_x["r"]`` is H×D, ``W_h["r"]`` H×H, biases 1×H.

    ``packed`` maps torch's names (``weight_ih_l0``, ...) to the packed
    leaves when the gates are slices of them.
    """

    kind: str
    W_x: dict
    W_h: dict
    b_x: dict | None = None
    b_h: dict | None = None
    packed: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def activation(phi):
    """The activation as a SymPy function class, undefined function or Lambda (names are looked up, never parsed).

    Raises:
        ConventionError: for an unknown name or an unusable object.
    """
    if isinstance(phi, str):
        try:
            return ACTIVATIONS[phi]
        except KeyError:
            raise ConventionError(
                f"unknown activation {phi!r}; use one of {', '.join(ACTIVATIONS)} or a SymPy function "
                f"(sympy.tanh, sympy.Function('phi'), a one-variable Lambda)"
            ) from None
    if isinstance(phi, sp.Lambda):
        if len(phi.variables) != 1:
            raise ConventionError("the activation must be a function of one variable")
        return phi
    if isinstance(phi, sp.core.function.UndefinedFunction) or (isinstance(phi, type) and issubclass(phi, sp.Function)):
        return phi
    raise ConventionError(
        f"the activation must be a SymPy function (sympy.tanh, sigmoid, relu, sympy.Function('phi')), a "
        f"one-variable Lambda, or one of {', '.join(ACTIVATIONS)}; got {phi!r}"
    )


def apply(phi, z):
    """φ(z) for a scalar SymPy expression, or the elementwise node φ(Z) for a matrix node."""
    phi = activation(phi)
    if isinstance(z, sp.Basic):
        return phi(z)
    return ops.Map(phi, z)


def derivative(phi) -> sp.Lambda:
    """φ′ as a one-variable Lambda: tanh′ = 1 − tanh², σ′ = σ(1 − σ), ReLU′ = H(x) with H(0) = 0, or φ′."""
    phi = activation(phi)
    body = phi.expr if isinstance(phi, sp.Lambda) else phi(_X)
    var = phi.variables[0] if isinstance(phi, sp.Lambda) else _X
    return sp.Lambda(var, partial(body, var))


ROW_KEYS = {"rnn": ("z", "h"), "gru": ("r", "u", "h̃", "h"), "lstm": ("i", "f", "c̃", "o", "c", "h")}
"""The rows each cell appends per time step, by key (the key is also the default base of the row's name)."""


def _row_namer(cell: str, start, names, tag, ledger=None):
    """``name(key, k)``: the name of row ``key`` at the k-th step (k from 0), i.e. at time ``start + k``.

    ``names`` maps a row key (:data:`ROW_KEYS`) to the base of its name (``{"z": "a"}`` names a_t) or to a
    function of the time t returning the whole name (``{"h": lambda t: f"s^{{({t})}}"}``).

    Raises:
        ShapeError: a ``start`` that is not an integer.
        ConventionError: an unknown key, or a name that is not a string or a function.
        LedgerError: (when ``name`` is called) a row name ``ledger`` already holds, with the fix.
    """
    keys = ROW_KEYS[cell]
    integer(start, f"{cell}: start, the time index of the first step as the page numbers it,",
            expected="an integer (0 or 1)")
    names = dict(names or {})
    unknown = sorted(set(names) - set(keys))
    if unknown:
        raise ConventionError(f"{cell}: names= has no row {', '.join(map(repr, unknown))}; its rows are "
                              f"{', '.join(map(repr, keys))} (map each to a base name such as 'a', or to a "
                              f"function of t)")
    for key, v in names.items():
        if not (isinstance(v, str) and v) and not callable(v):
            raise ConventionError(f"{cell}: names[{key!r}] must be a base name ('a' for a_t) or a function of the "
                                  f"time t returning the row's name; got {v!r}")

    def name(key: str, k: int) -> str:
        t = int(start) + k
        v = names.get(key, key)
        out = tagged(v(t) if callable(v) else f"{v}_{{{t}}}" if t < 0 else f"{v}_{t}", tag)
        if ledger is not None and out in ledger:
            raise LedgerError(f"{cell}: the row {out!r} of step t = {t} is already defined in this ledger (an initial "
                              f"state of that name?); number the steps as the page does with start= (start=1 gives "
                              f"{names.get(key, key) if not callable(v) else key}_1, … and leaves {out!r} to the "
                              f"initial state), or name the rows with names= or tag=")
        return out

    return name


def _fmt(shape) -> str:
    return "scalar" if shape == () else "×".join(str(s) for s in shape)


def _shape(h) -> tuple:
    return () if isinstance(h, sp.Basic) else tuple(h.shape)


def _positions(xs) -> list:
    """The inputs x_t as a list: a list of handles, or the rows of one T×D node (B = 1)."""
    if isinstance(xs, ops.Node):
        if xs.shape == ():
            raise ShapeError("a sequence is a list of inputs x_t or a T×D matrix whose rows are positions; "
                             "got a scalar")
        xs = [xs[t, :] for t in range(xs.shape[0])]
    xs = list(xs)
    if not xs:
        raise ShapeError("an empty sequence has no positions: T must be at least 1 "
                         "(give one input x_t per position t = 0, …, T−1)")
    first = _shape(xs[0])
    for t, x in enumerate(xs):
        if _shape(x) != first:
            raise ShapeError(f"x_{t} is {_fmt(_shape(x))} but x_0 is {_fmt(first)}: every position needs the same "
                             f"batch size and width")
    return xs


def _biases(b) -> list:
    if b is None:
        return []
    if isinstance(b, (tuple, list)):
        return [v for v in b if v is not None]
    return [b]


def _check_widths(cell: str, x_shape, W_x, W_h, biases=(), h_init=None, what="W_x, W_h"):
    """Raise a ShapeError naming x_t's, W_x's and W_h's shapes when the widths do not fit."""
    sx, sW, sU = _fmt(x_shape), _fmt(_shape(W_x)), _fmt(_shape(W_h))
    names = what.split(", ")
    head = f"{cell}: x_t is {sx}, {names[0]} is {sW} and {names[1]} is {sU}"
    if x_shape == ():
        if _shape(W_x) != () or _shape(W_h) != ():
            raise ShapeError(f"{head}; a scalar input needs scalar weights (or give x_t as a 1×1 matrix)")
        if any(_shape(v) != () for v in list(biases) + ([h_init] if h_init is not None else [])):
            raise ShapeError(f"{cell}: a scalar cell needs a scalar bias and a scalar initial state h_{{-1}}")
        return
    if _shape(W_x) == () or _shape(W_h) == ():
        raise ShapeError(f"{head}; a B×D input needs an H×D input weight and an H×H recurrent weight")
    B, D = x_shape
    H = W_x.shape[0]
    if W_x.shape[1] != D or W_h.shape != (H, H):
        raise ShapeError(
            f"{head}; {names[0]} must be H×D = H×{D} (output×input, as torch's weight_ih_l0) and {names[1]} "
            f"must be H×H with the same H as {names[0]}'s rows ({H}×{H})"
        )
    for b in biases:
        if _shape(b) != (1, H):
            raise ShapeError(f"{cell}: a bias is {_fmt(_shape(b))} but must be 1×{H} "
                             f"(one row, added for every example)")
    if h_init is not None and _shape(h_init) != (B, H):
        raise ShapeError(f"{cell}: the initial state is {_fmt(_shape(h_init))} but must be {B}×{H} "
                         f"(batch × hidden width)")


def _affine(x, W, h, U, biases):
    """x Wᵀ (+ biases) + h Uᵀ for matrices, w x + u h (+ b) for scalars; h = None drops its term (h_{−1} = 0)."""
    if isinstance(x, sp.Basic) and not isinstance(x, ops.Node):
        out = W * x + (U * h if h is not None else 0)
        for b in biases:
            out = out + b
        return out
    terms = [x @ W.T]
    if h is not None:
        terms.append(h @ U.T)
    terms.extend(biases)
    return ops.add(*terms)


# ---------------------------------------------------------------------------
# Elman RNN
# ---------------------------------------------------------------------------


def rnn(L, xs, W_x, W_h, b=None, *, phi=sp.tanh, h_init=None, tag: str | None = None, start: int = 0,
        names: dict | None = None) -> Recurrence:
    """Append z_t := x_t W_xᵀ + h_{t−1} W_hᵀ + b and h_t := φ(z_t) for t = start, …, start + T − 1 (the Elman RNN).

    Args:
        L: the ledger.
        xs: the inputs x_t: a list of scalar handles (the scalar RNN), a list
            of B×D handles, or one T×D matrix whose rows are positions (B = 1).
        W_x: H×D input weight (scalar w_x), W_h: H×H recurrent weight (scalar w_h).
        b: None, one 1×H bias b_h, or torch's pair (b_ih, b_hh) (scalars for the scalar RNN).
        phi: the activation (see the module docstring); tanh by default, as torch's nn.RNN.
        h_init: the initial state h_{start−1} (B×H or scalar), a leaf the author names as the page does
            (``L.input("h_0", ...)`` with ``start=1``); None means zero and its term is left out.
        tag: superscript added to the row names (z_t^{tag}).
        start: the time index of the first step as the page numbers it: 0 (default; rows z_0, h_0, …) or 1
            (rows z_1, h_1, …, so the page's initial state h_0 can be an input of that name).
        names: the page's names of the rows: ``{"z": "a"}`` names the preactivations a_t; a value may be a
            function of t returning the whole name. Keys ``"z"`` and ``"h"``.

    Returns:
        :class:`Recurrence` with the handles of z_t and h_t (B×H, or scalars), in time order from ``start``.

    Raises:
        ShapeError: an empty sequence (T must be at least 1), or widths of
            x_t, W_x and W_h that do not fit (the message names all three shapes).
        ConventionError: an unknown activation, a ``start`` that is not an integer, or an unknown key of ``names``.
        LedgerError: a row name already defined (an initial state named h_0 with ``start=0``: pass ``start=1``).

    Source: Week 06 handout (004), "One scalar recurrent model" and "General
    forward pass"; torch.nn.RNN (two biases, tanh or ReLU).
    """
    xs = _positions(xs)
    phi = activation(phi)
    biases = _biases(b)
    name = _row_namer("rnn", start, names, tag, L)
    _check_widths("Elman RNN cell", _shape(xs[0]), W_x, W_h, biases, h_init)
    run = Recurrence("rnn", xs, [], h_init=h_init, phi=phi, params=RNNParams(W_x, W_h, b), scalar=_shape(xs[0]) == (),
                     start=int(start))
    h = h_init
    for t, x in enumerate(xs):
        z = L.define(name("z", t), _affine(x, W_x, h, W_h, biases), note="preactivation")
        h = L.define(name("h", t), apply(phi, z), note="hidden state")
        run.z.append(z)
        run.h.append(h)
    return run


def sequence_inputs(L, T: int, *, width: int | None = None, batch: int = 1, name: str = "x", values=None,
                    start: int = 0) -> list:
    """Inputs x_start, …, x_{start+T−1}: scalars (``width=None``) or batch×width matrices; optional exact
    ``values[k]`` (k from 0). ``start`` is the page's time origin (1 for x_1, x_2, …), as for :func:`rnn`.

    Raises:
        ShapeError: when T is not an integer ≥ 1 (2.7 positions is no sequence), or width or batch is not a
            positive integer.
        ConventionError: a ``start`` that is not an integer.
    """
    T = integer(T, "sequence_inputs: T, the number of positions,", minimum=1,
                expected="an integer ≥ 1 (a sequence needs at least one position)")
    if width is not None:
        width = integer(width, "sequence_inputs: width, the number of features of each x_t,", minimum=1)
    batch = integer(batch, "sequence_inputs: batch, the number of rows of each x_t,", minimum=1)
    label = _row_namer("rnn", start, {"h": name}, None)
    out = []
    for t in range(T):
        v = None if values is None else values[t]
        if width is None:
            out.append(L.input(label("h", t), v))
        else:
            out.append(L.input(label("h", t), v, shape=None if v is not None else (batch, width)))
    return out


def rnn_parameters(L, D: int, H: int, *, bias: bool = True, naming: str = "torch", suffix: str = "_l0",
                   values: dict | None = None) -> RNNParams:
    """Leaves for an Elman cell: W_x (H×D), W_h (H×H) and biases, named as torch or as the handout.

    ``naming="torch"`` creates ``weight_ih{suffix}``, ``weight_hh{suffix}``
    and (``bias=True``) ``bias_ih{suffix}``, ``bias_hh{suffix}`` (1×H), shown
    as W_x, W_h, b_ih, b_hh; ``suffix=""`` gives nn.RNNCell's names.
    ``naming="handout"`` creates W_x, W_h and one bias b_h. ``values`` maps
    these names to exact values (see :func:`module_values`).

    Raises:
        ShapeError: a width D or H that is not a positive integer.
        ConventionError: for an unknown naming.
    """
    D, H = _widths("RNN", D, H)
    leaf = _leaf_maker(L, values)
    if naming == "handout":
        b = leaf("b_h", (1, H)) if bias else None
        return RNNParams(leaf("W_x", (H, D)), leaf("W_h", (H, H)), b)
    if naming != "torch":
        raise ConventionError(f"unknown naming {naming!r}; use 'torch' (weight_ih_l0, ...) or 'handout' "
                              f"(W_x, W_h, b_h)")
    W_x = leaf(f"weight_ih{suffix}", (H, D), display="Wₓ", latex="W_{x}")
    W_h = leaf(f"weight_hh{suffix}", (H, H), display="Wₕ", latex="W_{h}")
    b = None
    if bias:
        b = (leaf(f"bias_ih{suffix}", (1, H), display="bᵢₕ", latex="b_{ih}"),
             leaf(f"bias_hh{suffix}", (1, H), display="bₕₕ", latex="b_{hh}"))
    return RNNParams(W_x, W_h, b)


def _widths(cell: str, D, H) -> tuple[int, int]:
    """The input width D and hidden width H as positive integers (a ShapeError names the one that is not)."""
    return tuple(integer(w, f"{cell} parameters: the {what}", minimum=1,
                         expected="a positive integer (the number of features)")
                 for what, w in (("input width D", D), ("hidden width H", H)))

def _leaf_maker(L, values: dict | None):
    """A function creating a parameter leaf with its exact value from ``values`` when given, else symbolic."""
    values = values or {}

    def leaf(name, shape, **kw):
        return L.parameter(name, values.get(name), shape=None if name in values else shape, **kw)

    return leaf


# ---------------------------------------------------------------------------
# gated cells: parameters
# ---------------------------------------------------------------------------


def _gated_parameters(L, kind: str, gates: tuple, D: int, H: int, bias: bool, packed: bool, suffix: str,
                      values: dict | None) -> GatedParams:
    D, H = _widths(kind, D, H)
    G = len(gates)
    p = GatedParams(kind, {}, {}, {} if bias else None, {} if bias else None)
    make = _leaf_maker(L, values)
    if not packed:
        for a in gates:
            p.W_x[a], p.W_h[a] = make(f"W_{{x{a}}}", (H, D)), make(f"W_{{h{a}}}", (H, H))
            if bias:
                p.b_x[a], p.b_h[a] = make(f"b_{{x{a}}}", (1, H)), make(f"b_{{h{a}}}", (1, H))
        return p

    def leaf(n, shape):
        return make(n, shape, note=f"torch's packed {kind} parameter, gate blocks {', '.join(gates)}")

    w_ih, w_hh = leaf(f"weight_ih{suffix}", (G * H, D)), leaf(f"weight_hh{suffix}", (G * H, H))
    p.packed = {f"weight_ih{suffix}": w_ih, f"weight_hh{suffix}": w_hh}
    if bias:
        b_ih, b_hh = leaf(f"bias_ih{suffix}", (1, G * H)), leaf(f"bias_hh{suffix}", (1, G * H))
        p.packed.update({f"bias_ih{suffix}": b_ih, f"bias_hh{suffix}": b_hh})
    for k, a in enumerate(gates):
        rows = slice(k * H, (k + 1) * H)
        p.W_x[a] = L.define(f"W_{{x{a}}}", w_ih[rows, :], note=f"rows {k * H}:{(k + 1) * H} of weight_ih{suffix}")
        p.W_h[a] = L.define(f"W_{{h{a}}}", w_hh[rows, :], note=f"rows {k * H}:{(k + 1) * H} of weight_hh{suffix}")
        if bias:
            p.b_x[a] = L.define(f"b_{{x{a}}}", b_ih[:, rows], note=f"entries {k * H}:{(k + 1) * H} of bias_ih{suffix}")
            p.b_h[a] = L.define(f"b_{{h{a}}}", b_hh[:, rows], note=f"entries {k * H}:{(k + 1) * H} of bias_hh{suffix}")
    return p


def gru_parameters(L, D: int, H: int, *, bias: bool = True, packed: bool = True, suffix: str = "_l0",
                   values: dict | None = None) -> GatedParams:
    """GRU parameters: torch's packed leaves (gate order r, u, n) with one row per gate matrix, or per-gate leaves.

    ``packed=True``: leaves ``weight_ih{suffix}`` (3H×D), ``weight_hh{suffix}``
    (3H×H), ``bias_ih{suffix}``, ``bias_hh{suffix}`` (1×3H), and rows
    W_{xr} := weight_ih[0:H, :], W_{xu} := weight_ih[H:2H, :], W_{xn} :=
    weight_ih[2H:3H, :], likewise for W_h and the biases. ``suffix=""`` gives
    nn.GRUCell's names. ``packed=False``: leaves W_{xr}, …, b_{hn}.

    Raises:
        ShapeError: a width D or H that is not a positive integer.
    """
    return _gated_parameters(L, "GRU", GRU_GATES, D, H, bias, packed, suffix, values)


def lstm_parameters(L, D: int, H: int, *, bias: bool = True, packed: bool = True, suffix: str = "_l0",
                    values: dict | None = None) -> GatedParams:
    """LSTM parameters: torch's packed leaves (gate order i, f, c = torch's g, o; 4H rows) or per-gate leaves.

    As :func:`gru_parameters`; with two biases per gate (b_{xa} + b_{ha}, torch's bias_ih + bias_hh).

    Raises:
        ShapeError: a width D or H that is not a positive integer.
    """
    return _gated_parameters(L, "LSTM", LSTM_GATES, D, H, bias, packed, suffix, values)


def _check_gated(cell, p: GatedParams, gates, x_shape, h_init):
    for a in gates:
        if a not in p.W_x or a not in p.W_h:
            raise ConventionError(f"{cell}: the parameters have no weights for gate {a!r}; "
                                  f"the gates are {', '.join(gates)}")
        biases = [d[a] for d in (p.b_x, p.b_h) if d is not None and d.get(a) is not None]
        _check_widths(cell, x_shape, p.W_x[a], p.W_h[a], biases, h_init, what=f"W_{{x{a}}}, W_{{h{a}}}")


def _gate_bias(p: GatedParams, a):
    return [d[a] for d in (p.b_x, p.b_h) if d is not None and d.get(a) is not None]


# ---------------------------------------------------------------------------
# GRU
# ---------------------------------------------------------------------------


def check_gru_variant(variant: str) -> str:
    """Return ``variant`` or raise ConventionError listing the valid GRU variants."""
    if variant not in GRU_VARIANTS:
        raise ConventionError(
            f"unknown GRU variant {variant!r}; valid variants are {', '.join(map(repr, GRU_VARIANTS))} "
            f"('torch': reset gate applied to h W_hnᵀ + b_hn, as torch.nn.GRU; 'cho2014': reset gate applied to "
            f"h before W_hn, as Cho et al. 2014, eq. 8)"
        )
    return variant


def gru_mix(u, h_prev, candidate):
    """The GRU state update u ⊙ h_{t−1} + (1 − u) ⊙ h̃ (for h_{t−1} = None: (1 − u) ⊙ h̃), a node or a scalar.

    A coordinate of u near one retains the old state; near zero it takes the
    candidate (torch's convention and Cho et al. 2014, eq. 7).
    """
    return (1 - u) * candidate if h_prev is None else u * h_prev + (1 - u) * candidate


def gru(L, xs, p: GatedParams, *, variant: str = "torch", h_init=None, tag: str | None = None, start: int = 0,
        names: dict | None = None) -> Recurrence:
    """Append the rows r_t, u_t, h̃_t, h_t of a GRU for t = start, …, start + T − 1 (equations in the module
    docstring).

    Args:
        xs: the inputs x_t (B×D handles, or one T×D matrix).
        p: :class:`GatedParams` with gates ``"r"``, ``"u"``, ``"n"`` (see :func:`gru_parameters`).
        variant: ``"torch"`` (default) or ``"cho2014"``.
        h_init: h_{start−1} (B×H), a leaf named as the page names it; None means zero and drops its terms.
        tag: superscript added to the row names.
        start: the page's time index of the first step (0 by default; 1 for rows r_1, u_1, …), as for :func:`rnn`.
        names: the page's names of the rows, keys ``"r"``, ``"u"``, ``"h̃"``, ``"h"`` (``{"u": "z", "h̃": "n"}``
            for torch's z_t and n_t); a value is a base name or a function of t returning the whole name.

    Returns:
        :class:`Recurrence`; ``gates`` holds the lists ``"r"``, ``"u"``, ``"h̃"`` (keys as above, whatever the names).

    Raises:
        ConventionError: an unknown variant (lists the valid ones), a ``start`` that is not an integer, or an
            unknown key of ``names``.
        ShapeError: an empty sequence, or widths of x_t and the gate weights that do not fit.

    Source: torch.nn.GRU (reset after W_hn h + b_hn; h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1});
    Cho et al. (2014), eqs. (5)–(8); Week 06 handout (004), "A GRU learns how much to retain".
    """
    check_gru_variant(variant)
    xs = _positions(xs)
    if _shape(xs[0]) == ():
        raise ShapeError("GRU: give x_t as B×D matrices (a scalar GRU is the 1×1 case)")
    name = _row_namer("gru", start, names, tag, L)
    _check_gated("GRU cell", p, GRU_GATES, _shape(xs[0]), h_init)
    run = Recurrence("gru", xs, [], gates={"r": [], "u": [], "h̃": []}, h_init=h_init, params=p, variant=variant,
                     start=int(start))
    h = h_init
    for t, x in enumerate(xs):
        r = L.define(name("r", t), ops.Map(sigmoid, _affine(x, p.W_x["r"], h, p.W_h["r"], _gate_bias(p, "r"))),
                     note="reset gate")
        u = L.define(name("u", t), ops.Map(sigmoid, _affine(x, p.W_x["u"], h, p.W_h["u"], _gate_bias(p, "u"))),
                     note="update (retention) gate; torch's z_t")
        inner = [x @ p.W_x["n"].T] + ([p.b_x["n"]] if p.b_x and p.b_x.get("n") is not None else [])
        b_hn = [p.b_h["n"]] if p.b_h and p.b_h.get("n") is not None else []
        if variant == "torch":
            rec = ([h @ p.W_h["n"].T] if h is not None else []) + b_hn
            if rec:
                inner.append(r * ops.add(*rec))
        else:  # cho2014: reset before the recurrent product
            if h is not None:
                inner.append((r * h) @ p.W_h["n"].T)
            inner.extend(b_hn)
        n = L.define(name("h̃", t), ops.Map(sp.tanh, ops.add(*inner)), note="candidate state; torch's n_t")
        h = L.define(name("h", t), gru_mix(u, h, n),
                     note="hidden state: retained old state plus written candidate")
        for key, v in (("r", r), ("u", u), ("h̃", n)):
            run.gates[key].append(v)
        run.h.append(h)
    return run


# ---------------------------------------------------------------------------
# LSTM
# ---------------------------------------------------------------------------


def lstm(L, xs, p: GatedParams, *, h_init=None, c_init=None, tag: str | None = None, start: int = 0,
         names: dict | None = None) -> Recurrence:
    """Append the rows i_t, f_t, c̃_t, o_t, c_t, h_t of an LSTM for t = start, …, start + T − 1 (module docstring).

    Args:
        xs: the inputs x_t (B×D handles, or one T×D matrix).
        p: :class:`GatedParams` with gates ``"i"``, ``"f"``, ``"c"``, ``"o"`` (see :func:`lstm_parameters`).
        h_init, c_init: h_{start−1} and c_{start−1} (B×H), leaves named as the page names them; None means zero.
        tag: superscript added to the row names.
        start: the page's time index of the first step (0 by default; 1 for rows i_1, …, h_1), as for :func:`rnn`.
        names: the page's names of the rows, keys ``"i"``, ``"f"``, ``"c̃"``, ``"o"``, ``"c"``, ``"h"``
            (``{"c̃": "g"}`` for torch's g_t); a value is a base name or a function of t returning the whole name.

    Returns:
        :class:`Recurrence`; ``gates`` holds ``"i"``, ``"f"``, ``"c̃"``, ``"o"``; ``c`` the cell states.

    Raises:
        ShapeError: an empty sequence, or widths of x_t and the gate weights that do not fit.
        ConventionError: a ``start`` that is not an integer, or an unknown key of ``names``.

    Source: torch.nn.LSTM (gate order i, f, g, o; b_ih + b_hh; no peepholes);
    Week 06 handout (004), "An LSTM separates stored memory from the visible state".
    """
    xs = _positions(xs)
    if _shape(xs[0]) == ():
        raise ShapeError("LSTM: give x_t as B×D matrices (a scalar LSTM is the 1×1 case)")
    name = _row_namer("lstm", start, names, tag, L)
    _check_gated("LSTM cell", p, LSTM_GATES, _shape(xs[0]), h_init)
    if c_init is not None and _shape(c_init) != _shape(xs[0])[:1] + (p.W_h["i"].shape[0],):
        raise ShapeError(f"LSTM cell: c_{{-1}} is {_fmt(_shape(c_init))} but must be "
                         f"{_shape(xs[0])[0]}×{p.W_h['i'].shape[0]} (batch × hidden width)")
    run = Recurrence("lstm", xs, [], gates={"i": [], "f": [], "c̃": [], "o": []}, h_init=h_init, c_init=c_init,
                     params=p, start=int(start))
    h, c = h_init, c_init
    for t, x in enumerate(xs):
        pre = {a: _affine(x, p.W_x[a], h, p.W_h[a], _gate_bias(p, a)) for a in LSTM_GATES}
        i = L.define(name("i", t), ops.Map(sigmoid, pre["i"]), note="input gate")
        f = L.define(name("f", t), ops.Map(sigmoid, pre["f"]), note="forget gate")
        g = L.define(name("c̃", t), ops.Map(sp.tanh, pre["c"]), note="candidate storage; torch's g_t")
        o = L.define(name("o", t), ops.Map(sigmoid, pre["o"]), note="output gate")
        c = L.define(name("c", t), i * g if c is None else f * c + i * g, note="cell storage")
        h = L.define(name("h", t), o * ops.Map(sp.tanh, c), note="visible hidden state")
        for key, v in (("i", i), ("f", f), ("c̃", g), ("o", o)):
            run.gates[key].append(v)
        run.c.append(c)
        run.h.append(h)
    return run


# ---------------------------------------------------------------------------
# values from torch modules (duck-typed: blocks never import torch)
# ---------------------------------------------------------------------------


def _array(v) -> np.ndarray:
    if hasattr(v, "detach"):
        v = v.detach().cpu().tolist()
    arr = np.asarray(v, dtype=np.float64)
    return arr.reshape(1, -1) if arr.ndim == 1 else arr


def module_values(module_or_state, *, exact: bool = False, rename: dict | None = None) -> dict:
    """Ledger values from a torch module's parameters (the module, or its ``state_dict()``).

    One-dimensional biases become 1×n rows. With ``exact=True`` every entry
    becomes the exact rational its binary float stands for (a float32 weight
    0.10209… is the fraction it stores, not a rounded decimal), so a ledger
    built from them reproduces the module's own computation exactly;
    otherwise float64 arrays. ``rename`` maps module names to ledger names
    (``{"weight": "W_o"}`` for a head's nn.Linear).
    """
    state = module_or_state.state_dict() if hasattr(module_or_state, "state_dict") else dict(module_or_state)
    rename = rename or {}
    out = {}
    for name, v in state.items():
        arr = _array(v)
        key = rename.get(name, name)
        if exact:
            out[key] = sp.ImmutableMatrix(arr.shape[0], arr.shape[1],
                                          lambda i, j: sp.Rational(*Fraction(float(arr[i, j])).as_integer_ratio()))
        else:
            out[key] = arr
    return out


def gate_blocks(packed: np.ndarray, gates: Sequence[str], H: int) -> dict:
    """Split a packed G·H×… array (or 1×G·H bias row) into its gate blocks, in torch's order."""
    arr = np.asarray(packed)
    if arr.shape[0] == 1 and arr.shape[1] == len(gates) * H:
        return {a: arr[:, k * H:(k + 1) * H] for k, a in enumerate(gates)}
    if arr.shape[0] != len(gates) * H:
        raise ShapeError(f"a packed array with {len(gates)} gates of width {H} needs {len(gates) * H} rows; "
                         f"got {arr.shape}")
    return {a: arr[k * H:(k + 1) * H] for k, a in enumerate(gates)}
