"""Jupyter display: ledgers, claims, sections and derivations as MathJax LaTeX.

The core classes know nothing of presentation. This module registers
:func:`symseq.present.latex.repr_latex` with IPython's ``text/latex``
formatter by type *name* (module and class), so registering imports none of
those classes, and the renderer is imported only when something is shown.
``import symseq`` registers it when IPython is running; in a plain Python
session nothing is registered and nothing from ``symseq.present`` is imported.
``%load_ext symseq.present.jupyter`` registers it explicitly.
"""

from __future__ import annotations

import sys

# (module, class) of each object Jupyter shows as LaTeX
TYPES = (
    ("symseq.ledger", "Ledger"),
    ("symseq.verify.claims", "Claim"),
    ("symseq.authoring.derivation", "Section"),
    ("symseq.authoring.derivation", "Derivation"),
)


def latex(obj) -> str:
    """The MathJax LaTeX of a ledger, claim, section or derivation (:func:`symseq.present.latex.repr_latex`)."""
    from .latex import repr_latex

    return repr_latex(obj)


def register(ipython=None) -> bool:
    """Register :func:`latex` for :data:`TYPES` with ``ipython`` (the running shell when None).

    Returns whether a shell was found. Never imports IPython when it is not
    already imported, so a plain ``import symseq`` stays light.
    """
    if ipython is None:
        if "IPython" not in sys.modules:
            return False
        ipython = sys.modules["IPython"].get_ipython()
        if ipython is None:
            return False
    formatter = ipython.display_formatter.formatters["text/latex"]
    for module, name in TYPES:
        formatter.for_type_by_name(module, name, latex)
    return True


def load_ipython_extension(ipython):
    """``%load_ext symseq.present.jupyter``."""
    register(ipython)
