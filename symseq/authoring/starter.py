"""The files ``symseq new NAME`` writes: a starter derivation, and the pytest setup that runs its claims as tests.

:func:`starter` is a derivation module that verifies as written (``symseq verify NAME`` exits 0) and shows the
calls an author needs: a ledger, its inputs and parameters, the claims of the numbers the page prints, and the
inputs the page prints (``s.given``, for ``symseq audit``). The author replaces the placeholder handout file name,
the section title and the numbers with the page's own. :func:`conftest` makes ``pytest`` in the project folder
collect one test per claim through :mod:`symseq.pytest_plugin`, also where symseq is used from a source checkout
without its entry point.
"""

from __future__ import annotations

import re

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
"""A derivation name ``symseq new`` accepts: a letter, then letters, digits, ``-`` and ``_``."""

PLACEHOLDER_SOURCE = "my-worked-example.md"
"""The handout file name the starter names, for the author to replace with the page's own file."""


def module_name(name: str) -> str:
    """The module file stem for derivation ``name``: ``my-example`` → ``my_example``."""
    return name.replace("-", "_")


def starter(name: str) -> str:
    """The text of ``derivations/<module_name(name)>.py`` for derivation ``name`` (see the module docstring)."""
    return _STARTER.replace("{name}", name).replace("{source}", PLACEHOLDER_SOURCE)


def conftest() -> str:
    """The text of the ``conftest.py`` that loads symseq's pytest plugin when its entry point is not installed."""
    return _CONFTEST


_STARTER = '''"""{name}: a worked example, checked by symseq.

Replace the placeholders with the page's own: the file name in ``source`` (the page saved as Markdown, LaTeX,
HTML or text), the section title (its heading as the page writes it), the inputs and every printed number.

    symseq verify {name}            # every claim below: exit status 0 when all hold
    symseq audit {source}    # every number of the page: checked, wrong, or not yet claimed
    pytest                          # one test per claim (through symseq's pytest plugin)
"""

import sympy as sp

from symseq import Derivation, exact

derivation = Derivation("{name}", title="My worked example", source="{source}",
                        description="one tanh step h = tanh(w x + b), as the page computes it")


@derivation.section("1. One tanh step")  # the heading of the page's section, as printed
def one_step(s):
    L = s.ledger("h = tanh(w x + b)")  # 1. a ledger: the page's computation as named rows
    x = L.input("x", exact("0.5"))  # 2. inputs and parameters, exact as printed ("0.5" is 1/2)
    w = L.parameter("w", exact("0.8"))
    b = L.parameter("b", exact("0.1"))
    z = L.define("z", w * x + b)
    h = L.define("h", sp.tanh(z))

    s.given(x, what="x")  # 3. the inputs the page prints: symseq audit compares them with the text
    s.given(w, what="w")
    s.given(b, what="b")

    s.claim("0.5", z, what="z = w x + b")  # 4. each number as printed: it must hold to its last digit
    s.claim("0.462117", h, what="h = tanh(z)")
'''

_CONFTEST = '''"""pytest setup written by ``symseq new``: ``pytest`` runs one test per claim of ./derivations.

Installing symseq registers its pytest plugin; this file loads the plugin where symseq is used without
installing it (a source checkout on PYTHONPATH).
"""

from importlib.metadata import entry_points

if not any(e.value == "symseq.pytest_plugin" for e in entry_points(group="pytest11")):
    pytest_plugins = ["symseq.pytest_plugin"]
'''
