"""Shared tools of the exact proofs in :mod:`symseq.derive`: proof results, zero tests, reverse-mode Jacobians.

* :class:`Proof` is what every proving function returns: whether the
  statement holds, a one-line detail, and a witness when it does not (the
  entry and its exact or 30-digit value), so a derivation can state it with
  ``section.prove(statement, proof.check)``.
* :func:`vanishes` decides that an exact SymPy expression is identically
  zero: structurally, after expansion, or after simplification.
* :func:`reverse_jacobian` reads a full Jacobian ∂out/∂x off the ledger's own
  reverse mode: it adds a symbolic upstream adjoint G of the output's shape,
  the scalar ℓ = Σ G ⊙ out, runs :meth:`~symseq.Ledger.backward`, and
  differentiates the (G-linear) adjoint of x by each entry of G.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

import mpmath
import sympy as sp
from sympy.core.function import AppliedUndef

from .. import ops
from ..errors import ClaimError, ShapeError, SymseqError
from ..functions import partial
from ..numbers import short

_COUNTER = itertools.count()


@dataclass
class Proof:
    """The outcome of an exact proof: ``holds``, a one-line ``detail``, and a ``witness`` when it fails.

    ``bool(proof)`` is ``holds``; :meth:`check` returns ``(holds, detail)`` as
    :meth:`symseq.Section.prove` expects.
    """

    statement: str
    holds: bool
    detail: str = ""
    witness: dict = field(default_factory=dict)
    value: Any = None

    def __bool__(self) -> bool:
        return bool(self.holds)

    def check(self) -> tuple[bool, str]:
        return bool(self.holds), self.detail


def vanishes(expr) -> bool:
    """True when the exact SymPy expression (or every entry of a matrix) is identically zero.

    Tries, in order of cost: structural zero, zero as a polynomial in its
    symbols and atoms (:func:`zero_as_polynomial`), and ``expand``; then a
    value at an exact rational point (a nonzero value there proves the
    expression is not zero); then ``cancel`` of the expansion and ``simplify``.
    """
    if isinstance(expr, sp.MatrixBase):
        return all(vanishes(e) for e in expr)
    if expr == 0:
        return True
    if not isinstance(expr, sp.Basic) or _binds(expr):
        return _vanishes(expr)
    out = _VANISHED.get(expr)  # the same sum is often asked again (a row's sum, in two sections of a page)
    if out is None:
        if len(_VANISHED) >= _VANISHED_MAX:
            _VANISHED.clear()
        out = _VANISHED[expr] = _vanishes(expr)
    return out


_VANISHED: dict = {}  # expression → what vanishes decided (a deterministic function of the expression)
_VANISHED_MAX = 4096


def _binds(expr) -> bool:
    """Whether a node of ``expr`` binds symbols (a derivative, Subs, Lambda, sum or integral). SymPy takes two such
    expressions for equal when they differ only in the names of their bound symbols, so what was decided for one is
    not remembered for the other."""
    return any(_binding(n) for n in _distinct(expr))


def _distinct(expr):
    """Each distinct subexpression of ``expr`` once (``preorder_traversal`` visits a shared one at every place)."""
    seen, stack = set(), [expr]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        yield n
        stack.extend(n.args)


def _binding(n) -> bool:
    return isinstance(n, _BINDING) or bool(getattr(n, "bound_symbols", None))


def _vanishes(expr) -> bool:
    """:func:`vanishes` of one expression that is not structurally 0."""
    if zero_as_polynomial(expr):
        return True
    e = sp.expand(expr)
    if e == 0:
        return True
    syms = e.free_symbols
    # a nonzero value at an exact point proves that it is not identically zero (an undefined function f has no
    # value there, and SymPy recurses without end evaluating f's derivative at a point)
    if syms and not e.has(AppliedUndef):
        v = numeric(e, rational_point(syms, seed=7))
        if v.is_number and v.is_real and v.is_finite and abs(v) > sp.Float("1e-20"):
            return False
    try:
        if sp.cancel(sp.together(e)) == 0:
            return True
    except (sp.PolynomialError, TypeError):  # pragma: no cover - cancel refuses some expressions
        pass
    return sp.simplify(expr) == 0


_BINDING = (sp.Derivative, sp.Subs, sp.Integral, sp.Sum, sp.Product, sp.Limit, sp.Lambda, sp.Order)


def zero_as_polynomial(expr) -> bool:
    """True when ``expr`` expands to 0 with each exponential and other function or root in it taken as an
    independent symbol; False says nothing (it may still be zero).

    Each ``exp(k₁m₁ + … + k_n m_n)`` (rational kᵢ) becomes the product of y_m^(k/u_m) over its terms, one symbol
    y_m = exp(u_m m) for each m, u_m the largest rational of which every coefficient of m in the expression is an
    integer multiple (exp(a + b) = exp(a) exp(b), and exp(j a) = exp(a)^j for integer j); every other function, and every
    power with a non-integer exponent, becomes a symbol of its own. A polynomial (or rational function) in
    independent symbols that expands to 0 stays 0 whatever is put in for them, so a True is a proof. It is the
    same ``expand`` as :func:`vanishes` runs next, without SymPy asking for every exponential whether its
    argument is negative (most of the time of expanding softmax and attention gradients). When the result is a
    Laurent polynomial in those symbols (no sum in a denominator), :func:`_laurent_zero` gives expand's answer.
    """
    if not isinstance(expr, sp.Expr):
        return False
    parts = _parts(expr)
    if parts is None:
        if expr.has(*_BINDING):
            return False  # a symbol inside a derivative, sum or integral is not a value that can be renamed
        parts = expr.atoms(sp.exp), expr.atoms(sp.Function), expr.atoms(sp.Pow)
    exponentials, functions, powers = parts
    names: dict = {}

    def symbol(key):
        if key not in names:
            names[key] = sp.Dummy(f"a{len(names)}")
        return names[key]

    def terms(arg):  # (rational coefficient, the rest) of each term of an exponent
        return [term.as_coeff_Mul() for term in sp.Add.make_args(sp.expand(arg))]

    exps = {a: terms(a.args[0]) for a in exponentials}
    unit: dict = {}  # the largest rational of which every coefficient of a term m is an integer multiple
    for k, m in (t for ts in exps.values() for t in ts):
        if k.is_Rational:
            unit[m] = sp.Rational(math.gcd(unit[m].p, k.p), math.lcm(unit[m].q, k.q)) if m in unit else abs(k)

    def of_exp(a):
        return sp.Mul(*(symbol(("exp", m)) ** (k / unit[m]) if k.is_Rational else symbol(("exp", k * m))
                        for k, m in exps[a]))

    atoms = {a: of_exp(a) if a in exps else symbol(a) for a in functions}
    atoms.update({a: symbol(a) for a in powers if not a.exp.is_Integer and not isinstance(a, sp.exp)})
    try:
        x = expr.xreplace(atoms)
        zero = _laurent_zero(x)
        return sp.expand(x) == 0 if zero is None else zero
    except (TypeError, ValueError, RecursionError):  # pragma: no cover - left to expand and simplify
        return False


def _parts(expr) -> tuple[set, set, set] | None:
    """``expr.atoms(sp.exp)``, ``expr.atoms(sp.Function)`` and ``expr.atoms(sp.Pow)`` in one walk that visits each
    distinct subexpression once (``atoms`` walks the expression as a tree, and an attention gradient repeats its
    softmax weights in every term); None when a node binds symbols (a derivative, Subs, Lambda, sum or integral:
    SymPy takes two such nodes for equal when they differ only in their bound symbols, so visiting equal nodes once
    could miss what the second one holds), which is left to ``has`` and ``atoms``."""
    exponentials, functions, powers = set(), set(), set()
    for n in _distinct(expr):
        if _binding(n):
            return None
        if isinstance(n, sp.exp):
            exponentials.add(n)
        if isinstance(n, sp.Function):
            functions.add(n)
        if isinstance(n, sp.Pow):
            powers.add(n)
    return exponentials, functions, powers


def _laurent_zero(x) -> bool | None:
    """``sp.expand(x) == 0`` for ``x`` a Laurent polynomial: sums, products and nonnegative integer powers of
    rational numbers and commuting symbols, and negative integer powers of symbols; None for anything else.

    ``expand`` of such an expression distributes every product over every sum and collects like monomials, so it
    is 0 exactly when the polynomial is 0 (and expanding preserves the value, so it is 0 only then). That is
    decided here by sparse polynomial arithmetic (:mod:`sympy.polys.rings`, a symbol s and its inverse as two
    generators, s·s⁻¹ = 1 applied to the result), each distinct subexpression computed once, where ``expand``
    walks the expression as a tree."""
    from sympy.polys.domains import QQ
    from sympy.polys.rings import ring

    symbols: dict = {}  # symbol → its generator's index
    inverted: dict = {}  # symbol with a negative power → its inverse's generator's index
    for n in _distinct(x):
        t = type(n)
        if n.is_Symbol:
            if not n.is_commutative:
                return None
            symbols.setdefault(n, len(symbols))
        elif n.is_Rational or t is sp.Add or t is sp.Mul:
            continue
        elif t is sp.Pow and n.exp.is_Integer and (n.exp >= 0 or n.base.is_Symbol):
            if n.exp < 0:
                inverted.setdefault(n.base, None)
        else:
            return None
    if not symbols:
        return None  # a number: expand decides it at once
    inverted = {s: len(symbols) + i for i, s in enumerate(inverted)}
    _, *gens = ring([f"g{i}" for i in range(len(symbols) + len(inverted))], QQ)
    values: dict = {}

    def value(n):
        v = values.get(n)
        if v is None:
            t = type(n)
            if n.is_Symbol:
                v = gens[symbols[n]]
            elif n.is_Rational:
                v = gens[0].ring(QQ(int(n.p), int(n.q)))
            elif t is sp.Add:
                v = gens[0].ring.zero
                for a in n.args:
                    v += value(a)
            elif t is sp.Mul:
                v = gens[0].ring.one
                for a in n.args:
                    v *= value(a)
            elif n.exp >= 0:
                v = value(n.base) ** int(n.exp)
            else:
                v = gens[inverted[n.base]] ** int(-n.exp)
            values[n] = v
        return v

    p = value(x)
    if not inverted:
        return not p
    laurent: dict = {}  # exponents with s·s⁻¹ = 1 applied → coefficient
    for monom, coeff in p.items():
        key = list(monom[:len(symbols)])
        for s, k in inverted.items():
            key[symbols[s]] -= monom[k]
        key = tuple(key)
        laurent[key] = laurent.get(key, 0) + coeff
    return not any(laurent.values())


def fresh(prefix: str) -> str:
    """A ledger name not used before in this process (``prefix`` plus a counter), for helper rows."""
    return f"{prefix}_{{{next(_COUNTER)}}}"


def reverse_jacobian(L, out, wrt, *, values: bool = True, keep=()) -> sp.Matrix:
    """The Jacobian ∂out/∂wrt from the ledger's reverse mode, exactly.

    Args:
        L: the ledger holding ``out`` and ``wrt``.
        out: handle of an m×n row (the function's output).
        wrt: handle of a p×q name (an input, parameter or row) on a path to ``out``.
        values: use the leaves' exact values where they have one (symbols otherwise).
        keep: names to keep as symbols in the closed form (see :meth:`Ledger.expand`).

    Returns:
        An (m·n)×(p·q) SymPy matrix, entries in row-major order of ``out``
        (rows) and ``wrt`` (columns): J[(i,c), (j,e)] = ∂out_ic/∂wrt_je.

    Raises:
        ShapeError: when ``out`` is a scalar row (use ``backward`` directly).
    """
    if out.shape == ():
        raise ShapeError("reverse_jacobian needs a matrix-valued output; for a scalar use Ledger.backward")
    G_name, loss_name = fresh("Ḡ"), fresh("ℓ")
    G = L.input(G_name, shape=out.shape, note="symbolic upstream adjoint")
    L.define(loss_name, ops.Sum(G * out, None), note="ℓ = Σ Ḡ ⊙ out: its gradient is Ḡ times the Jacobian")
    name = wrt.name if isinstance(wrt, ops.Ref) else str(wrt)
    grads = L.backward(loss_name, wrt=[name], names=lambda n: f"∂{loss_name}/∂{n}")
    adj = L.expand(grads.name(name), values=values, keep=keep)
    adj = adj if isinstance(adj, sp.MatrixBase) else sp.Matrix([[adj]])
    Gs = list(L.entry_symbols(G_name))
    flat = list(adj)
    return sp.Matrix(len(Gs), len(flat), lambda i, j: partial(flat[j], Gs[i]))


def rational_point(symbols, seed: int = 0) -> dict:
    """Small distinct rationals for ``symbols`` (a deterministic point at which to show a nonzero value)."""
    import random

    rnd = random.Random(seed)
    out = {}
    for s in sorted(symbols, key=lambda s: s.name):
        out[s] = sp.Rational(rnd.randint(-9, 9), rnd.randint(2, 7)) + sp.Rational(1, 11)
    return out


def numeric(expr, point: dict, digits: int = 30):
    """``expr`` at ``point`` (symbol → exact value), evaluated to ``digits`` significant digits. A derivative in
    ``expr`` is taken at the point (``Subs``), not with respect to its value (which SymPy refuses: "Can't
    calculate derivative wrt 14/33"); of an undefined function it stays unevaluated, so the result is then not a
    number."""
    if expr.has(sp.Derivative):
        return sp.N(expr.subs(point), digits)
    return sp.N(expr.xreplace(point), digits)


# ---------------------------------------------------------------------------
# identities: decided numerically first, simplified only when numerically zero
# ---------------------------------------------------------------------------

IDENTITY_DIGITS = 30
"""The working digits of the numeric stage of :func:`identity_proof`."""

IDENTITY_POINTS = 3
"""How many points inside the domain the numeric stage of :func:`identity_proof` evaluates a difference at."""

SIMPLIFY_SECONDS = 30.0
"""The time :func:`identity_proof` allows SymPy to reduce one numerically zero difference to 0."""


class _OutOfTime(Exception):
    """Raised inside SymPy by :func:`_time_limit` when the time allowed has passed."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise :class:`_OutOfTime` after ``seconds`` (a real-time timer: the main thread of a POSIX process, with no
    other timer running; elsewhere the time is not limited)."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
    if not usable:
        yield
        return

    def alarm(signum, frame):
        raise _OutOfTime()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)


def same_name_clashes(exprs) -> list[tuple[str, list]]:
    """(name, symbols) for each name that stands for several SymPy symbols in ``exprs`` (the same name with other
    assumptions, e.g. a ledger's real ``y_1`` and a plain ``sp.Symbol("y_1")``): SymPy treats them as different
    variables, so a difference between them never vanishes."""
    by_name: dict = {}
    for e in exprs:
        for s in getattr(e, "free_symbols", ()):
            if isinstance(s, sp.Symbol) and not isinstance(s, sp.Dummy):
                by_name.setdefault(s.name, set()).add(s)
    return [(n, sorted(ss, key=lambda s: sorted(_assumed(s).items()))) for n, ss in sorted(by_name.items())
            if len(ss) > 1]


def _assumed(s: sp.Symbol) -> dict:
    """The assumptions a symbol was created with (``{"real": True}``; ``{}`` for a plain ``sp.Symbol``)."""
    return dict(getattr(s, "_assumptions_orig", None) or {})


def _describe_assumptions(s: sp.Symbol) -> str:
    a = _assumed(s)
    return ", ".join(f"{k}={v}" for k, v in sorted(a.items())) if a else "no assumptions"


def clash_detail(clashes, owners=None) -> str:
    """The message for :func:`same_name_clashes`: which name, which assumptions, and the fix. ``owners`` maps a
    symbol to a description of where it comes from ("the ledger 'one step'")."""
    owners = owners or {}
    parts = []
    for name, syms in clashes:
        kinds = "; ".join(f"{owners.get(s, 'a symbol')} with {_describe_assumptions(s)}" for s in syms)
        parts.append(f"the name {name!r} stands for {len(syms)} different SymPy symbols ({kinds}), which SymPy "
                     f"never takes for equal")
    fix = ", ".join(f"L.symbol({n!r})" for n, _ in clashes)
    return "; ".join(parts) + f": build every side from the ledger's own symbols ({fix}, or the handle the ledger " \
                              f"returned), not from a new sp.Symbol"


def _sample(s: sp.Symbol, rnd) -> sp.Rational:
    """An exact point for ``s`` inside the domain its assumptions give (positive, negative, integer, real)."""
    if s.is_integer:
        v = sp.Integer(rnd.randint(1, 5))
        return -v if s.is_negative else v if (s.is_positive or s.is_nonnegative) else v * rnd.choice((1, -1))
    v = sp.Rational(rnd.randint(3, 37), rnd.randint(11, 23))  # in (0.13, 3.4), no simple fraction
    if s.is_negative or s.is_nonpositive:
        return -v
    if s.is_positive or s.is_nonnegative:
        return v
    return v * rnd.choice((1, -1))


def _concrete_functions(expr, rnd) -> dict:
    """Each undefined function of ``expr`` (a general φ) as a concrete smooth function with random coefficients:
    a difference that is not zero for that φ is not zero for every φ."""
    out = {}
    for f in sorted({a.func for a in expr.atoms(AppliedUndef)}, key=str):
        n = len(next(a for a in expr.atoms(AppliedUndef) if a.func == f).args)
        xs = sp.symbols("u" if n == 1 else f"u:{n}", real=True, seq=True)
        body = sum(sp.Rational(rnd.randint(2, 9), 7) * sp.sin(sp.Rational(rnd.randint(3, 11), 5) * x)
                   + sp.Rational(rnd.randint(1, 9), 13) * x ** 2 for x in xs) + sp.Rational(rnd.randint(1, 9), 17)
        out[f] = sp.Lambda(xs, body)
    return out


def _concrete(expr, funcs: dict):
    """``expr`` with its undefined functions replaced by ``funcs`` and the derivatives that makes computable done."""
    e = expr
    for f, lam in funcs.items():
        e = e.replace(f, lam)
    return e.doit() if e.has(sp.Derivative, sp.Subs) else e


@functools.lru_cache(maxsize=None)
def _context(digits: int):
    """(an mpmath context at ``digits`` digits, its library for the backends' evaluation), made once: a context
    costs 1–3 ms to make, and an identity is evaluated at several points, each term on its own (about a thousand
    evaluations in ``symseq verify``). Nothing changes its precision."""
    from ..backends.mpmath_backend import MpmathLibrary

    ctx = mpmath.MPContext()
    ctx.dps = digits
    return ctx, MpmathLibrary(ctx)


def _at(expr, point: dict, digits: int, cache: dict | None = None):
    """``expr`` (no undefined function left) at ``point`` with mpmath at ``digits`` digits, by the backends' own
    evaluation (:func:`symseq.backends.scalar.evaluate`, linear in the expression's size); None outside its real
    domain (a complex or undefined value, a division by zero). ``cache``: the values of subexpressions at this
    point at these digits, read and filled (see :func:`~symseq.backends.scalar.evaluate`)."""
    from ..backends.scalar import evaluate as evaluate_scalar

    ctx, lib = _context(digits)
    try:
        v = evaluate_scalar(expr, lib, {}, {s: lib.number(x) for s, x in point.items()}, cache)
    except (SymseqError, TypeError, ValueError, ZeroDivisionError, ArithmeticError, NotImplementedError):
        return None
    if isinstance(v, (ctx.mpc, complex)):
        if abs(v.imag) > ctx.mpf(10) ** (-(digits - 5)) * max(1, abs(v.real)):
            return None  # complex: the point lies outside the real domain (√ or log of a negative number)
        v = v.real
    try:
        v = ctx.mpf(v)
    except (TypeError, ValueError):
        return None
    return None if ctx.isnan(v) or ctx.isinf(v) else mpmath.mpf(v)


def _point_text(point: dict, funcs: dict, limit: int = 12) -> str:
    items = sorted(point.items(), key=lambda kv: kv[0].name)
    text = ", ".join(f"{s} = {v}" for s, v in items[:limit])
    if len(items) > limit:
        text += f" and {len(items) - limit} more"
    if funcs:
        text += " with " + ", ".join(f"{f}({', '.join(map(str, lam.variables))}) = {lam.expr}"
                                     for f, lam in funcs.items())
    return text


def _numeric_witness(diff, sides, digits: int, points: int, seed: int):
    """(witness text or None, how many points were evaluated, the largest |value| there): the first point inside
    the domain where ``diff`` is not numerically zero, with the two sides' values when ``sides`` is given."""
    import random

    rnd = random.Random(seed)
    funcs = _concrete_functions(diff, rnd)
    try:
        e = _concrete(diff, funcs)
    except Exception:  # noqa: BLE001 - SymPy cannot apply the concrete φ: no numeric stage
        return None, 0, None
    syms = sorted(e.free_symbols, key=lambda s: s.name)
    done, largest = 0, None
    for _ in range(4 * points):
        if done >= points:
            break
        point = {s: _sample(s, rnd) for s in syms}
        seen: dict = {}  # the values of the subexpressions at this point: each term of e is read, not evaluated again
        v = _at(e, point, digits, seen)
        if v is None:
            continue
        done += 1
        largest = abs(v) if largest is None else max(largest, abs(v))
        scale = max([abs(t) for t in (_at(a, point, digits, seen) for a in sp.Add.make_args(e)) if t is not None]
                    + [1])
        if abs(v) > mpmath.mpf(10) ** (-(digits - 10)) * scale:
            where = f"at {_point_text(point, funcs)}" if point or funcs else "as numbers"
            if sides is not None:
                a, b = (_at(_concrete(sp.sympify(x), funcs), point, digits) for x in sides)
                return (f"the two sides differ {where}: left {_short(a)}, right {_short(b)} (difference "
                        f"{_short(v)})"), done, largest
            return f"the difference{_brief(diff)} is not zero {where}: it is {_short(v)}", done, largest
        if not point:
            break  # a number: one evaluation decides
    return None, done, largest


def _brief(e) -> str:
    """`` 2*z``: a short difference, expanded, to show in a message; "" for a long one (never simplified)."""
    if sp.count_ops(e) > 40:
        return ""
    text = str(sp.expand(e))
    return f" {text}" if len(text) <= 60 else ""


def _short(v) -> str:
    return "undefined" if v is None else short(v, 12)


def _as_expr(d):
    """A difference as a SymPy object (numbers converted, text never parsed); None when it cannot be one."""
    if isinstance(d, str):
        return None
    try:
        return sp.sympify(d, strict=True)
    except (sp.SympifyError, TypeError):
        return None


def identity_proof(differences, *, sides=None, owners=None, digits: int = IDENTITY_DIGITS,
                   points: int = IDENTITY_POINTS, seconds: float = SIMPLIFY_SECONDS) -> Proof:
    """Decide that every difference (SymPy expressions or matrices) is identically zero: numerically first, then
    exactly.

    1. Names that stand for several symbols (:func:`same_name_clashes`) fail at once, saying which and how to fix.
    2. Each entry (derivatives at a point and ``Subs`` evaluated) is evaluated at ``digits`` digits at ``points``
       exact random points inside its domain (each symbol's assumptions; points where a root or logarithm turns
       complex, or a division by zero occurs, are skipped), a general function φ taken as a random smooth
       function. A value that is not zero there (beyond 10^−(digits−10) of its terms' size) fails the identity
       with that point and the value (the two sides' values, when ``sides`` gives them as (left, right) pairs).
    3. An entry that is numerically zero everywhere it was evaluated is reduced to 0 by ``expand`` and then
       ``simplify``, within ``seconds``; when SymPy does not reach 0, the identity fails and says so (it is
       zero at every point tried, but not proved).

    Args:
        differences: SymPy expressions or matrices, each left − right.
        sides: None, or one (left, right) pair per difference (the values shown for a false identity).
        owners: symbol → where it comes from, for the message of step 1.
        digits, points, seconds: the numeric stage's digits and points, and the time SymPy is given per entry.

    Returns:
        :class:`Proof`: ``detail`` is "1 difference simplifies to 0" or "N differences simplify to 0" when every
        one does.

    Raises:
        ClaimError: a difference that is neither a SymPy expression nor a matrix.

    Source: numeric zero-testing before symbolic simplification, as in SymPy's own ``Expr.equals``
    (random-point evaluation) and Schwartz–Zippel style identity testing.
    """
    entries = []
    for k, d in enumerate(differences):
        sd = sides[k] if sides is not None else None
        if isinstance(d, sp.MatrixBase):
            ls = list(sd[0]) if sd is not None else [None] * len(d)
            rs = list(sd[1]) if sd is not None else [None] * len(d)
            entries += [(sp.sympify(e), None if sd is None else (a, b), (k, i, d.shape)) for i, (e, a, b)
                        in enumerate(zip(d, ls, rs))]
        elif isinstance(_as_expr(d), sp.Expr):
            entries.append((_as_expr(d), sd, (k, None, None)))
        else:
            raise ClaimError(f"an identity's difference {k} must be a SymPy expression or matrix (left − right); got "
                             f"a {type(d).__name__} (give two sides as sides=[(left, right)], or use s.identity, "
                             f"which takes (left, right) pairs)")
    clashes = same_name_clashes([e for e, _, _ in entries] + [x for _, s, _ in entries if s for x in s])
    if clashes:
        return Proof("identity", False, clash_detail(clashes, owners))
    for n, (e, sd, (k, i, shape)) in enumerate(entries):
        e = e.doit() if e.has(sp.Subs) else e
        if e == 0:
            continue
        where = "" if len(entries) == 1 else (f"difference {k}" if i is None else
                                               f"difference {k}, entry ({i // shape[1]}, {i % shape[1]})") + ": "
        witness, tried, largest = _numeric_witness(e, sd, digits, points, seed=1000 + n)
        if witness is not None:
            return Proof("identity", False, where + witness)
        try:
            with _time_limit(seconds):
                reduced = sp.Integer(0) if zero_as_polynomial(e) else sp.expand(e)
                reduced = reduced if reduced == 0 else sp.simplify(e)
            zero = reduced == 0
        except _OutOfTime:
            zero = None
        if zero is False and reduced.is_number and not reduced.free_symbols and len(str(reduced)) < 80:
            return Proof("identity", False, f"{where}the difference is {reduced} ≈ {_short(sp.N(reduced, 30))}, "
                                            f"not 0")
        if not zero:
            told = "" if not tried else (f"it is zero to {digits - 10} digits at {tried} point(s) (largest "
                                         f"|value| {_short(largest)}), but ")
            how = f"SymPy did not reduce it to 0 within {seconds:g} s" if zero is None else \
                "SymPy does not simplify it to 0"
            return Proof("identity", False, f"{where}{told}{how}; prove it another way (expand by hand, or "
                                            f"s.agree at the ledger's values)")
    n = len(entries)
    return Proof("identity", True, "1 difference simplifies to 0" if n == 1 else f"{n} differences simplify to 0")
