"""The tree of printed mathematics: what :mod:`symseq.read.syntax` builds from a page's or a claim's text.

A printed number (:class:`Num`, with its exact value and printed precision), ``e`` and ``π`` (:class:`Const`),
operations (:class:`Neg`, :class:`Bin`, :class:`Pow`), a function applied (:class:`Call`), a printed list
(:class:`Vec`; a list of lists is a matrix, rows first), a name bound to a printed value (:class:`Ref`) and a
statement as a chain of relations (:class:`Statement`, with each part's text). The helpers below walk a tree:
its printed numbers in reading order, a tree with one number printed otherwise, and the tree shown as text.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy as sp

from .number import PrintedNumber


@dataclass(frozen=True)
class Num:
    """A printed number (its exact value and printed precision)."""

    number: PrintedNumber


def integer(k: int) -> Num:
    """The exact integer ``k`` as a printed number: an operand a statement is built with (an exponent, a count, a
    position), never rounded."""
    return Num(PrintedNumber(str(k), sp.Integer(k), 0, False))


@dataclass(frozen=True)
class Const:
    """``e``, ``π``, or ``∞`` (in a claim's formula only)."""

    name: str


@dataclass(frozen=True)
class Neg:
    arg: object


@dataclass(frozen=True)
class Bin:
    """``op`` is one of + - * / · @ (× reads as ·, ÷ as /)."""

    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Pow:
    base: object
    exponent: object


@dataclass(frozen=True)
class Call:
    name: str  # one of FUNCTIONS (ln reads as log, σ as sigmoid)
    arg: object


@dataclass(frozen=True)
class Vec:
    """A printed list: entries are nodes (a Vec of Vecs is a matrix)."""

    items: tuple


@dataclass(frozen=True)
class Ref:
    """A name the page bound earlier to a printed value (``W_z``, ``q_6``, ``h1``): ``node`` is that value as
    printed (a number or list, with its printed precision), so a name bound by a rounded result carries the
    result's rounding into :func:`interval`."""

    name: str
    node: object


@dataclass(frozen=True)
class Statement:
    """A statement ``part₀ rel₁ part₁ rel₂ …``: ``parts`` are trees, ``relations`` "=" or "≈" (one fewer),
    ``texts`` each part as printed, ``spans`` each part's (start, end) in the text it was read from (empty for a
    statement built from parts read elsewhere)."""

    parts: tuple
    relations: tuple
    texts: tuple
    spans: tuple = ()


def numbers(node, *, signed: bool = False) -> list:
    """The printed numbers of a tree (:class:`PrintedNumber`), in reading order; with ``signed``, a number under
    an odd number of unary minus signs carries the negative value (``[-1, 0]`` gives −1 and 0: a copy of
    ``[1, 0]`` with its sign changed is then told apart)."""
    out: list = []

    def walk(n, neg=False):
        if isinstance(n, Num):
            out.append(dataclasses.replace(n.number, value=-n.number.value) if neg and signed else n.number)
        elif isinstance(n, Neg):
            walk(n.arg, not neg)
        elif isinstance(n, Bin):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, Pow):
            walk(n.base)
            walk(n.exponent)
        elif isinstance(n, Call):
            walk(n.arg)
        elif isinstance(n, Ref):
            walk(n.node, neg)
        elif isinstance(n, Vec):
            for i in n.items:
                walk(i, neg)

    walk(node)
    return out


def _at_number(node, j: int, replace, *, signed: bool = False):
    """The tree ``node`` with the node of its ``j``-th printed number (reading order of :func:`numbers`) put
    through ``replace``: the number itself, or, with ``signed``, the unary minus directly around it when it has
    one."""
    count = [0]

    def walk(n):
        if isinstance(n, Num) or signed and isinstance(n, Neg) and isinstance(n.arg, Num):
            count[0] += 1
            return replace(n) if count[0] - 1 == j else n
        if isinstance(n, Neg):
            return Neg(walk(n.arg))
        if isinstance(n, Bin):
            return Bin(n.op, walk(n.left), walk(n.right))
        if isinstance(n, Pow):
            return Pow(walk(n.base), walk(n.exponent))
        if isinstance(n, Call):
            return Call(n.name, walk(n.arg))
        if isinstance(n, Ref):
            return Ref(n.name, walk(n.node))
        if isinstance(n, Vec):
            return Vec(tuple(walk(i) for i in n.items))
        return n

    return walk(node)


def with_number(node, j: int, number: PrintedNumber):
    """The tree ``node`` with its ``j``-th printed number (the reading order of :func:`numbers`) replaced by
    ``number``: a statement as it would read with one number printed otherwise."""
    return _at_number(node, j, lambda n: Num(number))


def without_sign(node, j: int):
    """The tree ``node`` with the unary minus directly before its ``j``-th printed number (reading order of
    :func:`numbers`) removed: ``sqrt(-64)`` read as ``sqrt(64)``; None when that number has no minus sign."""
    signed = []  # whether the j-th number stands under a minus sign

    def unsign(n):
        signed.append(isinstance(n, Neg))
        return n.arg if isinstance(n, Neg) else n

    out = _at_number(node, j, unsign, signed=True)
    return out if signed == [True] else None


def show(node) -> str:
    """A tree as text in the grammar's own notation (``tanh(0.98)``, ``W_z @ combined``, ``[0.40, 0.35]``): how
    a part of a printed step is named in a report."""
    if isinstance(node, Num):
        return node.number.text
    if isinstance(node, Const):
        return node.name
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Vec):
        return "[" + ", ".join(show(i) for i in node.items) + "]"
    if isinstance(node, Neg):
        return "-" + _wrap(node.arg)
    if isinstance(node, Pow):
        return f"{_wrap(node.base)}^{_wrap(node.exponent)}"
    if isinstance(node, Call):
        return f"{node.name}({show(node.arg)})"
    if isinstance(node, Bin):
        op = {"·": "·", "*": "*", "/": "/", "@": "@"}.get(node.op, node.op)
        plain = (node.op == "+" and not isinstance(node.right, Neg)) or not isinstance(node.right, (Bin, Neg))
        right = show(node.right) if plain else _wrap(node.right)
        left = show(node.left) if node.op in ("+", "-") or not isinstance(node.left, Bin) \
            or node.left.op not in ("+", "-") else _wrap(node.left)
        return f"{left} {op} {right}"
    return repr(node)  # pragma: no cover


def _wrap(node) -> str:
    return show(node) if isinstance(node, (Num, Const, Ref, Vec, Call)) else f"({show(node)})"


def computes(node) -> bool:
    """Whether a part computes something (an operation or a function), rather than print a number, a list of
    numbers or a name: the part after it in a chain is then a printed result (``tanh(0.5) = 0.4621``), not an
    input (``w = 0.3``). A number written with a scientific factor is a product written out: ``1\\,024 \\times
    10^{-3} = 1.024`` computes 1.024."""
    if isinstance(node, Ref):
        return False
    if isinstance(node, Num):
        return "10^" in node.number.text.replace(" ", "")
    if isinstance(node, Vec):
        return any(computes(i) for i in node.items)
    return not is_number(node)


def result_parts(statement: Statement) -> list[int]:
    """The indices of the parts a statement prints as results: each part that follows ``≈``, or ``=`` after a part
    that computes (:func:`computes`); ``w = 0.3`` prints an input, ``tanh(0.5) = 0.4621`` a result."""
    return [k + 1 for k, rel in enumerate(statement.relations) if rel != "=" or computes(statement.parts[k])]


def is_number(node) -> bool:
    """A bare printed number (signed or not), or a list of them: what a result is printed as."""
    if isinstance(node, Num):
        return True
    if isinstance(node, Neg):
        return isinstance(node.arg, Num)
    if isinstance(node, Vec):
        return all(is_number(i) for i in node.items)
    return False

