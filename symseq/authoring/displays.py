"""Displays a section records for presentation: tables, heatmaps, paired rows, gradient-path figures.

A section records them in the handout's order (:meth:`~symseq.authoring.Section.table`,
``show_table``, ``heatmap``, ``paired_rows``, ``gradient_paths``); ``symseq show``,
LaTeX, figures and Jupyter render them, each evaluated by the derivation's
:class:`~symseq.values.Values` service.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ledger import Ledger


@dataclass
class TableSpec:
    """A table as the handout prints it: a matrix node with row and column labels and its rounding."""

    label: str
    value: Any
    printed: list | None = None
    rows: list | None = None
    cols: list | None = None
    digits: int | None = None
    values: Any = field(default=None, repr=False, compare=False)  # the derivation's Values service


@dataclass
class HeatmapSpec:
    """A heatmap a handout draws: a matrix node, its labels, and which entries are masked (excluded)."""

    label: str
    value: Any
    rows: list | None = None
    cols: list | None = None
    allowed: Any = None  # boolean matrix (True = allowed) or None
    digits: int = 3
    title: str = ""
    values: Any = field(default=None, repr=False, compare=False)  # the derivation's Values service


@dataclass
class PairedRowsSpec:
    """Forward rows beside their backward rows, in the handout's order (Week 06, Table 3)."""

    label: str
    ledger: Ledger
    pairs: list  # (forward name or None, backward name or None)
    values: Any = field(default=None, repr=False, compare=False)  # the derivation's Values service


@dataclass
class GradientPathsSpec:
    """A gradient-path figure a handout draws (Week 06, Figure 3): its label and the parameters of its curves.

    The curves are computed on demand by :func:`symseq.derive.paths.gradient_path_curves`
    (a few seconds: one backward pass per path length), once.
    """

    label: str
    params: dict
    _curves: Any = field(default=None, init=False, repr=False, compare=False)

    def curves(self):
        """The :class:`~symseq.derive.paths.PathCurves` of these parameters."""
        if self._curves is None:
            from ..derive.paths import gradient_path_curves

            self._curves = gradient_path_curves(**self.params)
        return self._curves
