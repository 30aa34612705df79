"""The authoring API: a handout's :class:`Derivation`, its :class:`Section` s, what they record, and discovery.

A derivation module (``derivations/`` of this project, or an author's own) builds
ledgers and states claims section by section (:mod:`.derivation`); sections
record tables, heatmaps and figures for presentation (:mod:`.displays`), and the
inputs and reported numbers ``symseq audit`` looks for; :mod:`.discovery` finds
derivations by name, file or folder. Each name is imported when first used, so that
``symseq list`` reads the catalogue of derivations without loading SymPy.
"""

import importlib

_LAZY = {**dict.fromkeys(["Derivation", "Given", "Reported", "Section"], ".derivation"),
         **dict.fromkeys(["Entry", "bundled", "catalogue", "default_paths", "discover", "from_path", "select"],
                         ".discovery"),
         **dict.fromkeys(["GradientPathsSpec", "HeatmapSpec", "PairedRowsSpec", "TableSpec"], ".displays")}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name], __name__), name)
    return value


__all__ = ["Derivation", "Section", "Given", "Reported", "TableSpec", "HeatmapSpec", "PairedRowsSpec",
           "GradientPathsSpec", "Entry", "bundled", "catalogue", "default_paths", "discover", "from_path", "select"]
