"""my-example: the page my-worked-example.md, one tanh step h = tanh(w x + b)."""

import sympy as sp

from symseq import Derivation

derivation = Derivation("my-example", title="A tanh step by hand", source="my-worked-example.md")


@derivation.section("1. One tanh step")  # the page's heading, as printed
def one_step(s):
    L = s.ledger("h = tanh(w x + b)")  # the page's computation as named rows
    x = L.input("x", s.given("x"))  # the values the page prints after "x =", "w =", "b ="
    w = L.parameter("w", s.given("w"))
    b = L.parameter("b", s.given("b"))
    z = L.define("z", w * x + b)
    h = L.define("h", sp.tanh(z))

    s.claim(z, what="z = w x + b")  # what the page prints for z: the end of "z = w x + b = ... = 0.5"
    s.claim(h, what="h = tanh(z)")  # and for h: 0.4621, to its four printed decimals
