"""Handout notation: ledger names, SymPy expressions and node trees as Unicode or LaTeX.

* Names follow the handouts: ``g_0^z`` prints g₀ᶻ / ``g^{z}_{0}``, ``h_{-1}`` h₋₁,
  ``H^(0)`` H⁽⁰⁾, ``W_Q`` W_Q, ``phi`` φ.
* Expressions print on one line as a reader writes them: ``1/(1 + e^{1/√2})``,
  ``e w_o φ′(z₂)``, ``1 − tanh²``; LaTeX uses ``\\odot`` for the Hadamard product
  and ``^{\\top}`` for the transpose.
* Indices, one notation for entries and blocks, counted from 0, row then column, as mathematics: an entry
  ``X_{01}`` (``X_{1,10}`` when an index has two digits), a row ``Z_{1,:}``, a run of columns with both ends
  included ``QKV_{:,0..1}`` (NumPy's ``QKV[:, 0:2]``), other index sets in braces ``X_{\\{0,2\\},:}``; the
  terminal writes ``X[0,1]``, ``Z[1, :]``, ``QKV[:, 0..1]``, ``X[{0,2}, :]`` (:meth:`Notation.slice`).
* A name is mathematics only: a word in a script is upright (``W_out`` → ``W_{\\mathrm{out}}``), and so is a
  name inside a script (``mu_{H_enc}`` → ``\\mu_{H_{\\mathrm{enc}}}``), never code set letter by letter.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

from ..ledger import split_name
from .tex import tex_math

GREEK = {
    "alpha": ("α", r"\alpha"), "beta": ("β", r"\beta"), "gamma": ("γ", r"\gamma"), "delta": ("δ", r"\delta"),
    "epsilon": ("ε", r"\epsilon"), "eta": ("η", r"\eta"), "theta": ("θ", r"\theta"), "lambda": ("λ", r"\lambda"),
    "mu": ("μ", r"\mu"), "nu": ("ν", r"\nu"), "pi": ("π", r"\pi"), "rho": ("ρ", r"\rho"), "sigma": ("σ", r"\sigma"),
    "tau": ("τ", r"\tau"), "phi": ("φ", r"\phi"), "psi": ("ψ", r"\psi"), "omega": ("ω", r"\omega"),
    "Sigma": ("Σ", r"\Sigma"), "Phi": ("Φ", r"\Phi"), "Omega": ("Ω", r"\Omega"), "Delta": ("Δ", r"\Delta"),
}

SUB = dict(zip("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
SUP = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ"))


def _script(text: str, table: dict, mark: str) -> str:
    """Sub/superscript characters where Unicode has them all (g₀ᶻ), else ``_text`` (S_masked) or ``_{a b}``."""
    if text and all(ch in table or ch == "," for ch in text):
        return "".join(table.get(ch, ch) for ch in text)
    return f"{mark}{text}" if text.isalnum() else f"{mark}{{{text}}}"


def unicode_name(name: str) -> str:
    """Unicode display of a ledger name: ``g_0^z`` → g₀ᶻ, ``h_{-1}`` → h₋₁, ``W_Q`` → W_Q, ``phi`` → φ."""
    if name.startswith("∂") and "/∂" in name:  # default adjoint key ∂L/∂x
        loss, _, of = name[1:].partition("/∂")
        return f"∂{unicode_name(loss)}/∂{unicode_name(of)}"
    base, sub, sup = split_name(name)
    base = GREEK.get(base, (base,))[0]
    sub = GREEK.get(sub, (sub,))[0]
    return base + (_script(sub, SUB, "_") if sub else "") + (_script(sup, SUP, "^") if sup else "")


def latex_name(name: str, *, bold: bool = False) -> str:
    """LaTeX display of a ledger name: ``g_0^z`` → ``g_{0}^{z}``, ``W_out`` → ``W_{\\mathrm{out}}``.

    Unicode becomes LaTeX commands (``ŷ`` → ``\\hat{y}``, ``ε`` → ``\\epsilon``,
    ``∂`` → ``\\partial``) and LaTeX specials are escaped, so any ledger name
    compiles. ``bold`` sets the base letter of a matrix in bold, as the
    handouts write matrices (``\\mathbf{W}_{Q}``, ``\\boldsymbol{\\mu}``).
    """
    if name.startswith("∂") and "/∂" in name:
        loss, _, of = name[1:].partition("/∂")
        return r"\frac{\partial %s}{\partial %s}" % (latex_name(loss), latex_name(of, bold=bold))
    base, sub, sup = split_name(name)

    def part(s):
        if s in GREEK:
            return GREEK[s][1]
        s = _PYTHON_RANGE.sub(lambda m: f"{m.group(1)}..{int(m.group(2)) - 1}", s)  # p_{0:3} → p_{0..2}
        if s == "ell":  # the loss of one position, ℓ
            return r"\ell"
        if re.fullmatch(r"[A-Za-z]{2,}", s):
            return r"\mathrm{%s}" % s
        if re.fullmatch(r"[A-Za-z]+'*[_^].+", s):  # a name inside a script: v_{LN_1} → v_{\mathrm{LN}_{1}},
            return latex_name(s)  # mu_{H_enc} → \mu_{H_{\mathrm{enc}}}
        return tex_math(s)

    out = part(base)
    if bold:
        out = _bold(base, out)
    if sub:
        out += "_{%s}" % part(sub)
    if sup:
        out += "^{%s}" % part(sup)
    return out


# A half-open range of indices a name may carry from code (p_{0:3}): written as a run with both ends included,
# p_{0..2}, as Notation.slice writes blocks.
_PYTHON_RANGE = re.compile(r"(?<![\d.])(\d+):(\d+)(?![\d.])")


def _bold(base: str, tex: str) -> str:
    if re.fullmatch(r"[A-Za-z]", base):
        return r"\mathbf{%s}" % tex
    if base in GREEK or re.fullmatch(r"\\[A-Za-z]+", tex):
        return r"\boldsymbol{%s}" % tex
    m = re.fullmatch(r"([A-Za-z])('+)", base)
    if m:
        return r"\mathbf{%s}%s" % (m.group(1), m.group(2))
    return tex


# ---------------------------------------------------------------------------
# expressions
# ---------------------------------------------------------------------------


class UnicodePrinter(StrPrinter):
    """Single-line Unicode printing of SymPy expressions in handout notation."""

    printmethod = "_unicode"

    def __init__(self, names=None, placeholders=None, rank=None, entrywise=()):
        super().__init__({"order": None})
        self.names = names or {}
        self.placeholders = placeholders or {}
        self.rank = rank or (lambda name: 3)
        self.entrywise = tuple(entrywise)

    def _factor_key(self, f):
        if f.is_number:
            return 0
        if f.is_Symbol:
            return self.rank(f.name)
        if f.is_Pow and f.base.is_Symbol:
            return self.rank(f.base.name)
        return 5

    # atoms
    def _print_Symbol(self, expr):
        if expr in self.placeholders:
            return self.placeholders[expr]
        return self.names.get(expr.name) or unicode_name(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Infinity(self, expr):
        return "∞"

    def _print_NegativeInfinity(self, expr):
        return "−∞"

    def _print_Exp1(self, expr):
        return "e"

    def _print_Pi(self, expr):
        return "π"

    def _print_Integer(self, expr):
        return str(expr.p).replace("-", "−")

    def _print_Rational(self, expr):
        return f"{expr.p}/{expr.q}".replace("-", "−")

    def _print_Half(self, expr):
        return "1/2"

    def _print_Float(self, expr):
        return super()._print_Float(expr).replace("-", "−")

    # structure
    def _atomic(self, e) -> bool:
        return e.is_Atom or isinstance(e, sp.Function) or isinstance(e, (sp.Derivative, sp.Subs)) or (
            e.is_Pow and e.base.is_Atom and e.exp.is_Integer and e.exp > 0)

    def _wrap(self, e, strict=False):
        s = self._print(e)
        if e.is_Add or (strict and (e.is_Mul or (e.is_Rational and not e.is_Integer))) or (
                e.is_Number and e.is_negative and strict):
            return f"({s})"
        return s

    def _print_Add(self, expr):
        terms = list(expr.as_ordered_terms()) if expr.is_commutative else list(expr.args)
        terms.sort(key=lambda t: t.could_extract_minus_sign())  # positive terms first: ŷ − y
        out = ""
        for i, t in enumerate(terms):
            neg = t.could_extract_minus_sign()
            body = self._print(-t if neg else t)
            if (-t if neg else t).is_Add or neg and body.startswith("−"):  # x − (−2 x), never x − −2 x
                body = f"({body})"
            if i == 0:
                out = ("−" if neg else "") + body
            else:
                out += (" − " if neg else " + ") + body
        return out

    def _print_Mul(self, expr):
        if expr.could_extract_minus_sign():
            inner = self._print(-expr)
            return "−" + (f"({inner})" if (-expr).is_Add or inner.startswith("−") else inner)
        split = _entrywise_product(expr, self.entrywise)
        if split is not None:
            const, num, den = split

            def wrap(f):
                t = self._print(f)
                return f"({t})" if f.is_Add or t.startswith("−") else t

            core = " ⊙ ".join(wrap(f) for f in num) or "1"
            if den:
                core = (f"({core})" if len(num) > 1 else core) + "/" + (
                    wrap(den[0]) if len(den) == 1 else "(" + " ⊙ ".join(wrap(f) for f in den) + ")")
            return core if const == 1 else f"{self._wrap(const, strict=True)} {core}"
        # p/q · √q  →  p/√q   (1/√2 rather than √2/2; I/√2 rather than √2 I/2)
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_Rational and rest.is_Pow and rest.exp == sp.S.Half and rest.base.is_Integer and coeff.q == rest.base:
            return f"{coeff.p}/√{rest.base}"
        split = _root_over(expr)
        if split is not None:
            p, q, others = split
            num = self._print(p * others) if p != 1 else self._print(others)
            if (p * others).is_Add:
                num = f"({num})"
            return f"{num}/√{q}"
        num, den = sp.fraction(expr, exact=True)
        if den != 1:
            n = self._product(num) if num.is_Mul else self._wrap(num)
            d = self._print(den)
            if den.is_Add or den.is_Mul or (den.is_Pow and not den.exp.is_Integer and den.exp != sp.S.Half):
                d = f"({d})"
            return f"{n}/{d}"
        return self._product(expr)

    def _product(self, expr):
        """Factors side by side (numbers first): a factor that is a sum, a fraction or negative keeps its
        parentheses, x (−y) and never x −y; a number after another factor is joined by ·, 2·3 and never 23."""
        factors = sorted(expr.as_ordered_factors(), key=self._factor_key)
        out = ""
        for k, f in enumerate(factors):
            s = self._print(f)
            if f.is_Add or (f.is_Rational and not f.is_Integer) or s.startswith("−"):
                s = f"({s})"
            out += s if k == 0 else ("·" if f.is_Number else " ") + s
        return out

    def _print_Pow(self, expr):
        b, e = expr.args
        if e == sp.S.Half:
            s = self._print(b)
            return "√" + _root_argument(s, b)
        if e == -sp.S.Half:
            s = self._print(b)
            return "1/√" + _root_argument(s, b)
        if e.is_Rational and e.is_negative:
            return "1/" + self._wrap(b ** (-e), strict=True)
        if isinstance(b, sp.Function) and e.is_Integer and e > 0 and not isinstance(b, sp.exp) and len(b.args) == 1 \
                and hasattr(b, "func") and b.func.__name__ in ("tanh", "sigmoid", "sin", "cos", "tan"):
            name = "σ" if b.func.__name__ == "sigmoid" else b.func.__name__
            return f"{name}{_script(str(e), SUP, '^')}({self._print(b.args[0])})"
        base = self._print(b)
        if not (b.is_Atom and not (b.is_Number and (b.is_negative or not b.is_Integer))):
            if not isinstance(b, sp.Function):
                base = f"({base})"
        if e.is_Integer and e > 0:
            return base + _script(str(e), SUP, "^")
        return f"{base}^{{{self._print(e)}}}"

    def _print_exp(self, expr):
        a = expr.args[0]
        s = self._print(a)
        if a.is_Symbol or (a.is_Integer and a >= 0):
            return f"e^{s}" if len(s) == 1 else f"e^{{{s}}}"
        return f"e^{{{s}}}"

    def _print_Function(self, expr):
        name = type(expr).__name__
        name = GREEK.get(name, (name,))[0]
        return f"{name}({', '.join(self._print(a) for a in expr.args)})"

    def _print_Derivative(self, expr):
        f = expr.expr
        if len(expr.variables) == 1 and isinstance(f, sp.core.function.AppliedUndef) and len(f.args) == 1 \
                and f.args[0] == expr.variables[0]:
            name = GREEK.get(type(f).__name__, (type(f).__name__,))[0]
            return f"{name}′({self._print(f.args[0])})"
        return f"∂({self._print(f)})/∂({', '.join(self._print(v) for v in expr.variables)})"

    def _print_Subs(self, expr):
        d, (v,), (p,) = expr.args
        if isinstance(d, sp.Derivative) and isinstance(d.expr, sp.core.function.AppliedUndef) and d.expr.args == (v,):
            name = GREEK.get(type(d.expr).__name__, (type(d.expr).__name__,))[0]
            return f"{name}′({self._print(p)})"
        return f"({self._print(d)})|_{{{self._print(v)}={self._print(p)}}}"

    def _print_Heaviside(self, expr):
        x = self._print(expr.args[0])
        h0 = expr.args[1] if len(expr.args) > 1 else sp.S.Half
        return f"𝟙[{x} > 0]" if h0 == 0 else f"H({x})"

    def _print_KroneckerDelta(self, expr):
        return f"δ_{{{self._print(expr.args[0])},{self._print(expr.args[1])}}}"

    def _print_log(self, expr):
        return f"log({self._print(expr.args[0])})"

    def _print_Abs(self, expr):
        return f"|{self._print(expr.args[0])}|"

    def _print_ImmutableDenseMatrix(self, expr):
        rows = ["[" + ", ".join(self._print(e) for e in expr.row(i)) + "]" for i in range(expr.rows)]
        return "[" + ", ".join(rows) + "]" if expr.rows > 1 else rows[0]

    _print_MutableDenseMatrix = _print_ImmutableDenseMatrix


def _root_argument(s: str, base) -> str:
    """What follows √: one word (√2, √x) or a parenthesised group; √W_Q and √σ(Y) would read as (√W)_Q and
    (√σ)(Y)."""
    if base.is_Atom and s.isalnum():
        return s
    if s.startswith("(") and s.endswith(")"):
        depth = 0
        for k, ch in enumerate(s):
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                if k == len(s) - 1:
                    return s
                break
    return f"({s})"


class HandoutLatexPrinter(LatexPrinter):
    """LaTeX printing with ledger names and handout conventions (1/√2, φ′, \\odot).

    ``numbers``: the placeholders stand for numbers (a step with its values substituted), so every product
    is written with ``\\cdot`` (0.5 \\cdot 2, never 0.5 2)."""

    def __init__(self, names=None, placeholders=None, rank=None, entrywise=(), numbers=False):
        super().__init__({"fold_short_frac": False, "mul_symbol": "dot" if numbers else None,
                          "inv_trig_style": "abbreviated"})
        self.numbers = numbers
        self.names = names or {}
        self.placeholders = placeholders or {}
        self.rank = rank or (lambda name: 3)
        self.entrywise = tuple(entrywise)

    def _print_Add(self, expr, order=None):
        terms = list(expr.as_ordered_terms())
        terms.sort(key=lambda t: t.could_extract_minus_sign())
        out = ""
        for i, t in enumerate(terms):
            neg = t.could_extract_minus_sign()
            body = self._print(-t if neg else t)
            if (-t if neg else t).is_Add or neg and body.startswith("-"):  # x - (-2 x), never x - -2 x
                body = r"\left(%s\right)" % body
            out += ("-" if neg else "") + body if i == 0 else (" - " if neg else " + ") + body
        return out

    def _print_Symbol(self, expr, style="plain"):
        if expr in self.placeholders:
            return self.placeholders[expr]
        return self.names.get(expr.name) or latex_name(expr.name)

    _print_Dummy = _print_Symbol

    def _print_Mul(self, expr):
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_Rational and coeff < 0:
            inner = self._print(-expr)
            return "- " + (r"\left(%s\right)" % inner if (-expr).is_Add or inner.startswith("-") else inner)
        split = _entrywise_product(expr, self.entrywise) if not expr.could_extract_minus_sign() else None
        if split is not None:
            const, num, den = split

            def wrap(f):
                t = self._print(f)
                return r"\left(%s\right)" % t if f.is_Add or t.startswith("-") else t

            core = r" \odot ".join(wrap(f) for f in num) or "1"
            if den:
                core = r"\frac{%s}{%s}" % (core, r" \odot ".join(wrap(f) for f in den) if len(den) > 1 else
                                            self._print(den[0]))
            if const == 1:
                return core
            c = self._print(const)
            return (r"\left(%s\right)" % c if const.is_Add else c) + " " + core
        if coeff.is_Rational and rest.is_Pow and rest.exp == sp.S.Half and rest.base.is_Integer and coeff.q == rest.base:
            return r"\frac{%d}{\sqrt{%d}}" % (coeff.p, rest.base)
        split = _root_over(expr)
        if split is not None:
            p, q, others = split
            return r"\frac{%s}{\sqrt{%d}}" % (self._print(p * others), q)
        num, den = sp.fraction(expr, exact=True)
        if den == 1 and not expr.could_extract_minus_sign() and coeff == 1:
            def key(f):
                if f.is_number:
                    return 0
                if f.is_Symbol:
                    return self.rank(f.name)
                if f.is_Pow and f.base.is_Symbol:
                    return self.rank(f.base.name)
                return 5
            factors = sorted(expr.as_ordered_factors(), key=key)
            out = ""
            for k, f in enumerate(factors):  # x (-y), never x - y; 2 \cdot 3, never 2 3
                s = self._print(f)
                if f.is_Add or s.startswith("-"):
                    s = r"\left(%s\right)" % s
                out += s if k == 0 else (r" \cdot " if f.is_Number or self.numbers else " ") + s
            return out
        return super()._print_Mul(expr)

    def parenthesize_super(self, s):
        """A base with a superscript is protected, ``{x^{2}}^{3}``; one already in parentheses needs nothing more."""
        return s if _enclosed(s) else super().parenthesize_super(s)

    def _print_Derivative(self, expr):
        f = expr.expr
        if len(expr.variables) == 1 and isinstance(f, sp.core.function.AppliedUndef) and f.args == tuple(expr.variables):
            return r"%s'\left(%s\right)" % (self._print(sp.Symbol(type(f).__name__)), self._print(f.args[0]))
        return super()._print_Derivative(expr)

    def _print_Subs(self, expr):
        d, (v,), (p,) = expr.args
        if isinstance(d, sp.Derivative) and isinstance(d.expr, sp.core.function.AppliedUndef) and d.expr.args == (v,):
            return r"%s'\left(%s\right)" % (self._print(sp.Symbol(type(d.expr).__name__)), self._print(p))
        return super()._print_Subs(expr)

    def _print_Heaviside(self, expr, exp=None):
        x = self._print(expr.args[0])
        h0 = expr.args[1] if len(expr.args) > 1 else sp.S.Half
        return r"\mathbf{1}\left[%s > 0\right]" % x if h0 == 0 else r"H\left(%s\right)" % x


def _entrywise_product(expr, entrywise):
    """(constant, varying numerator factors, varying denominator factors) of a product inside a function applied
    entrywise to a matrix, when two or more factors vary with the matrix; else None.

    Side by side, two matrices are their matrix product (Q Kᵀ), so such factors are printed joined by ⊙:
    σ′(Z) = σ(Z) ⊙ (1 − σ(Z)), never (1 − σ(Z)) σ(Z). A constant factor still scales (2 Z, Z/√π).
    """
    if not entrywise or not expr.is_Mul or not expr.has(*entrywise):
        return None
    const, num, den = [], [], []
    for f in expr.as_ordered_factors():
        if not f.has(*entrywise):
            const.append(f)
        elif f.is_Pow and f.exp.is_number and f.exp.is_negative:
            den.append(f.base ** -f.exp)
        else:
            num.append(f)
    if len(num) + len(den) < 2:
        return None
    return sp.Mul(*const), num, den


def _root_over(expr):
    """(p, q, rest) when ``expr`` is p/q · √q · rest with integers p, q and a non-numeric rest, else None."""
    if not expr.is_Mul:
        return None
    coeff, rest = expr.as_coeff_Mul()
    if not coeff.is_Rational or coeff.q == 1 or not rest.is_Mul:
        return None
    root = sp.sqrt(coeff.q)
    factors = list(rest.args)
    if root not in factors or coeff.p < 0:
        return None
    factors.remove(root)
    others = sp.Mul(*factors)
    if others.is_number:
        return None
    return sp.Integer(coeff.p), int(coeff.q), others


# ---------------------------------------------------------------------------
# node trees
# ---------------------------------------------------------------------------


def _ranges(idx, n, *, latex: bool = False):
    """The indices ``idx`` of an axis of length ``n`` in the notation of :meth:`Notation.slice`: ``:`` (all),
    ``2`` (one), ``0..1`` (a run, both ends included), ``{0,2}`` (any others; ``\\{0,2\\}`` in LaTeX)."""
    idx = list(idx)
    if idx == list(range(n)):
        return ":"
    if idx == list(range(idx[0], idx[-1] + 1)):
        return f"{idx[0]}..{idx[-1]}" if len(idx) > 1 else str(idx[0])
    listed = ",".join(str(i) for i in idx)
    return r"\{%s\}" % listed if latex else "{%s}" % listed


class Notation:
    """Formats node trees and expressions for one style ("unicode" or "latex"), with a ledger's names."""

    def __init__(self, style: str = "unicode", ledger=None, *, bold: bool = False):
        if style not in ("unicode", "latex"):
            raise ValueError(f"style must be 'unicode' or 'latex'; got {style!r}")
        self.style = style
        self.ledger = ledger
        self.bold = bold and style == "latex"
        self.names = {}
        if ledger is not None:
            for n, it in ledger.items.items():
                if style == "unicode":
                    override = it.display
                else:  # a Unicode display name (ŷ) serves LaTeX too when no LaTeX override is given
                    override = it.latex or (latex_name(it.display, bold=self._is_matrix(n)) if it.display else None)
                if override:
                    self.names[n] = override
        self.uni = style == "unicode"

    def _is_matrix(self, n: str) -> bool:
        return self.bold and self.ledger is not None and n in self.ledger and self.ledger[n].shape != ()

    def rank(self, name: str) -> int:
        """Factor order in products, as the handouts write them: adjoints, weights, then the rest (e w_o, w_x x_t)."""
        if self.ledger is None or name not in self.ledger:
            return 3
        kind = self.ledger[name].kind
        return {"adjoint": 1, "parameter": 2}.get(kind, 3)

    # -- names and expressions
    def name(self, n: str) -> str:
        if n in self.names:
            return self.names[n]
        if self.ledger is not None and n in self.ledger:
            it = self.ledger[n]
            if it.kind == "adjoint" and it.adjoint_of is not None:
                of, loss = self.name(it.adjoint_of), self.name(it.loss)
                if n == f"∂{it.loss}/∂{it.adjoint_of}":
                    return f"∂{loss}/∂{of}" if self.uni else r"\frac{\partial %s}{\partial %s}" % (loss, of)
        return unicode_name(n) if self.uni else latex_name(n, bold=self._is_matrix(n))

    def expr(self, e, placeholders=None, *, entrywise=False, numbers=False) -> str:
        """``e`` in this notation; ``placeholders`` print symbols as given text. ``entrywise``: the placeholders
        stand for matrices (a function applied entrywise), so products of them print with ⊙. ``numbers``
        (LaTeX): they stand for numbers, so products print with ``\\cdot``."""
        if isinstance(e, sp.MatrixBase):
            return self.matrix(e)
        p = (UnicodePrinter if self.uni else HandoutLatexPrinter)(
            self.names, placeholders, self.rank, entrywise=tuple(placeholders or ()) if entrywise else (),
            **({"numbers": True} if numbers and not self.uni else {}))
        if self.ledger is not None:
            for s in e.free_symbols if isinstance(e, sp.Basic) else ():
                if s.name in self.ledger and s.name not in p.names:
                    p.names[s.name] = self.name(s.name)
        return p.doprint(e)

    def render(self, node) -> str:
        parts = [self.render(c) for c in node.children]
        return node.render(self, parts)

    # -- node formatting primitives (called by symseq.ops)
    def label(self, text):
        return text if self.uni else latex_name(text, bold=self.bold and text not in ("0", "1"))

    def matrix(self, m):
        if self.uni:
            return UnicodePrinter(self.names)._print_ImmutableDenseMatrix(sp.ImmutableMatrix(m))
        rows = [" & ".join(self.expr(e) for e in m.row(i)) for i in range(m.rows)]
        return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"

    def paren(self, s):
        return f"({s})" if self.uni else r"\left(%s\right)" % s

    def plus(self, s):
        return f" + {s}"

    def minus(self, s):
        return f" − {s}" if self.uni else f" - {s}"

    def neg(self, s):
        return f"−{s}" if self.uni else f"-{s}"

    def scale(self, a, b):
        return f"{a} {b}" if self.uni else f"{a} \\, {b}"

    def hadamard(self, a, b):
        return f"{a} ⊙ {b}" if self.uni else f"{a} \\odot {b}"

    def matmul(self, a, b):
        return f"{a} {b}" if self.uni else f"{a} {b}"

    def div(self, a, b):
        if self.uni and ("/" in a or "/" in b):
            return f"{a} / {b}"
        return f"{a}/{b}" if self.uni else r"\frac{%s}{%s}" % (_strip_paren(a), _strip_paren(b))

    def transpose(self, a):
        return f"{a}ᵀ" if self.uni else f"{_brace(a, '^')}^{{\\top}}"

    def apply(self, fn, child, text):
        """f applied entrywise (the node's precedence, from its body, decides the parentheses around it)."""
        (x,) = fn.variables
        body = fn.expr
        if isinstance(body, sp.Function) and body.args == (x,):
            return self.expr(body, {x: text})
        bare = not self.uni and body.is_Pow and body.base == x and body.exp == sp.S.Half  # \sqrt{...} groups
        return self.expr(body, {x: self.paren(text) if child.prec < 100 and not bare else text},
                         entrywise=child.shape != ())

    def reduce(self, kind, axis, child, text):
        over = {None: "", 0: "t", 1: "j"}[axis]
        if self.uni:
            sym = "Σ" if kind == "sum" else "mean"
            return f"{sym}_{over}({text})" if over else f"{sym}({text})"
        sym = r"\sum" if kind == "sum" else r"\operatorname{mean}"
        return (f"{sym}_{{{over}}}" if over else sym) + r"\left(%s\right)" % text

    def entry(self, text, i, j):
        """X[0,1] / X_{01}; indices of two digits are separated, X_{1,10}, since X_{110} could be (11, 0)."""
        if self.uni:
            return f"{text}[{i},{j}]"
        idx = f"{i}{j}" if i < 10 and j < 10 else f"{i},{j}"
        return f"{_brace(_unbold(text), '_')}_{{{idx}}}"

    def slice(self, text, rows, cols, shape):
        """A block of rows and columns, indexed as an entry is (row, then column; from 0): ``Z_{1,:}`` (row 1),
        ``QKV_{:,0..1}`` (columns 0 to 1, both included), ``X_{\\{0,2\\},:}`` (rows 0 and 2); in Unicode
        ``Z[1, :]``, ``QKV[:, 0..1]``, ``X[{0,2}, :]``. Never NumPy's half-open ``0:2``, never brackets in a
        subscript."""
        r, c = _ranges(rows, shape[0], latex=not self.uni), _ranges(cols, shape[1], latex=not self.uni)
        return f"{text}[{r}, {c}]" if self.uni else f"{_brace(text, '_')}_{{{r},{c}}}"

    def concat(self, parts, axis):
        sep = " | " if axis == 1 else "; "
        if self.uni:
            return "[" + sep.join(parts) + "]"
        if axis == 1:
            return r"\left[" + r" \;\middle|\; ".join(parts) + r"\right]"
        # stacked rows need a matrix environment: a bare \\ would end the row of an align
        return r"\begin{bmatrix}" + r" \\ ".join(parts) + r"\end{bmatrix}"

    def place(self, text, rows, cols, shape):
        """A block placed into zeros of ``shape``: E_{r,c} text, its indices as :meth:`slice` writes them."""
        r, c = _ranges(rows, shape[0], latex=not self.uni), _ranges(cols, shape[1], latex=not self.uni)
        unit = f"E[{r}, {c}]" if self.uni else f"E_{{{r},{c}}}"
        if text in ("1",):
            return unit
        if text in ("−1", "-1"):
            return ("−" if self.uni else "-") + unit
        return f"{unit}·{text}" if self.uni else f"{unit} {text}"

    def call(self, name, parts, sub=None):
        """A named operation, softmax_rows(S): ``sub`` says which axis it runs over."""
        if self.uni:
            return f"{name}{'_' + sub if sub else ''}({', '.join(parts)})"
        sub_tex = "_{\\mathrm{%s}}" % sub if sub else ""
        return r"\operatorname{%s}%s\left(%s\right)" % (name, sub_tex, ", ".join(parts))

    def take_rows(self, text, label):
        """Rows looked up by a named index: E[k_t] (rows by number print as a block, see :meth:`slice`)."""
        return f"{text}[{label}]"

    def take_along(self, text, label):
        if self.uni:
            return f"{text}[t, {label or 'c_t'}]"
        return f"{_brace(text, '_')}_{{t,{latex_name(label) if label else 'c_{t}'}}}"


def _top_level_script(s: str, marks: str = "_^") -> bool:
    """Whether ``s`` has one of ``marks`` (sub- or superscript) outside braces and parentheses."""
    depth = 0
    for ch in s:
        depth += ch in "{("
        depth -= ch in "})"
        if depth == 0 and ch in marks:
            return True
    return False


def _brace(s: str, mark: str) -> str:
    """``{g_{0}^{z}}^{\\top}``: LaTeX refuses a second superscript (or subscript) on one base; and a subscript
    after a superscript would sit on the same base (``e^{X}_{12}`` is e₁₂ to the X), so an indexed ``e^{X}``
    is braced too: ``{e^{X}}_{12}``."""
    marks = "_^" if mark == "_" else mark
    return "{%s}" % s if _top_level_script(s, marks) or (mark == "^" and s.endswith("'")) else s


def _unbold(s: str) -> str:
    """An entry of a matrix is a scalar: W_{Q,01}, not bold."""
    return re.sub(r"\\mathbf\{([A-Za-z])\}", r"\1", s)


def _enclosed(s: str) -> bool:
    """Whether ``s`` is one ``\\left( … \\right)`` group: the opening ``\\left(`` is closed by the final
    ``\\right)`` (not so in ``\\left(a\\right) \\odot \\left(b\\right)``)."""
    if not (s.startswith(r"\left(") and s.endswith(r"\right)")):
        return False
    depth = 0
    for m in re.finditer(r"\\left(?![A-Za-z])|\\right(?![A-Za-z])", s):
        depth += 1 if m.group(0) == r"\left" else -1
        if depth == 0:
            return m.end() == len(s) - 1
    return False


def _strip_paren(s: str) -> str:
    """``s`` without the parentheses around all of it (a fraction's bar groups it), if it is one group."""
    return s[6:-7] if _enclosed(s) else s
