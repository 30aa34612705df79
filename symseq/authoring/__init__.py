"""The authoring API: a handout's :class:`Derivation`, its :class:`Section` s, what they record, and discovery.

A derivation module (``derivations/`` of this project, or an author's own) builds
ledgers and states claims section by section (:mod:`.derivation`); sections
record tables, heatmaps and figures for presentation (:mod:`.displays`), and the
inputs and reported numbers ``symseq audit`` looks for; :mod:`.discovery` finds
derivations by name, file or folder.
"""

from .derivation import Derivation, Given, Reported, Section
from .discovery import bundled, default_paths, discover, from_path, select
from .displays import GradientPathsSpec, HeatmapSpec, PairedRowsSpec, TableSpec

__all__ = ["Derivation", "Section", "Given", "Reported", "TableSpec", "HeatmapSpec", "PairedRowsSpec",
           "GradientPathsSpec", "bundled", "default_paths", "discover", "from_path", "select"]
