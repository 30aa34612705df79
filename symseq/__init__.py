"""symseq: handout derivations for recurrent networks and attention as checked mathematics.

Build a handout's computation as a :class:`Ledger` of named intermediates,
derive its gradients symbolically (:meth:`Ledger.backward`), evaluate it
exactly, with mpmath, NumPy or torch (:func:`evaluate`), and check every
number the handout prints (:class:`Derivation`, ``symseq verify``).
"""

import importlib
import sys

__version__ = "0.1.0"

# The public API is imported when first used (PEP 562), so that ``symseq --version``, ``symseq list`` and an audit
# with no derivation do not load SymPy's heavy modules, NumPy or the blocks: one table, name -> module.
_LAZY = {
    **dict.fromkeys(["blocks", "functions", "ops"], None),
    **dict.fromkeys(["compile", "evaluate"], ".backends"),
    **dict.fromkeys(["AuditError", "BackendUnavailable", "ClaimError", "ClaimMismatch", "ConventionError",
                     "EvaluationError", "FileSystemError", "LedgerError", "MaskError", "NotRealError",
                     "PrecisionWarning", "ShapeError", "SymseqError", "VocabularyError"], ".errors"),
    **dict.fromkeys(["gelu", "gelu_tanh", "logsumexp", "relu", "relu_at_zero", "sigmoid", "softmax"], ".functions"),
    **dict.fromkeys(["Gradients", "Ledger"], ".ledger"),
    **dict.fromkeys(["exact", "exact_matrix"], ".numbers"),
    "Values": ".values",
    "Claim": ".verify.claims",
    **dict.fromkeys(["Derivation", "Section"], ".authoring"),
}


def __getattr__(name: str):
    """The public name ``name``, imported from its module on first use (:data:`_LAZY`)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _LAZY[name]
    value = importlib.import_module(f".{name}" if module is None else module, __name__)
    if module is not None:
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def _register_jupyter():
    """In a running IPython shell, show ledgers, claims, sections and derivations as LaTeX."""
    if "IPython" in sys.modules:
        from .present.jupyter import register

        register()


_register_jupyter()

__all__ = [
    "Ledger", "Gradients", "Values", "Derivation", "Section", "Claim", "evaluate", "compile", "exact", "exact_matrix",
    "blocks", "functions", "ops", "sigmoid", "relu", "relu_at_zero", "softmax", "logsumexp", "gelu", "gelu_tanh",
    "SymseqError", "ShapeError", "ConventionError", "MaskError", "EvaluationError", "LedgerError", "ClaimError",
    "ClaimMismatch", "NotRealError", "BackendUnavailable", "VocabularyError", "FileSystemError", "AuditError",
    "PrecisionWarning", "__version__",
]
