"""symseq: handout derivations for recurrent networks and attention as checked mathematics.

Build a handout's computation as a :class:`Ledger` of named intermediates,
derive its gradients symbolically (:meth:`Ledger.backward`), evaluate it
exactly, with mpmath, NumPy or torch (:func:`evaluate`), and check every
number the handout prints (:class:`Derivation`, ``symseq verify``).
"""

from . import blocks, functions, ops
from .backends import compile, evaluate
from .errors import (AuditError, BackendUnavailable, ClaimError, ClaimMismatch, ConventionError, EvaluationError,
                     FileSystemError, LedgerError, MaskError, NotRealError, PrecisionWarning, ShapeError, SymseqError,
                     VocabularyError)
from .functions import gelu, gelu_tanh, logsumexp, relu, relu_at_zero, sigmoid, softmax
from .ledger import Gradients, Ledger
from .numbers import exact, exact_matrix
from .values import Values
from .verify.claims import Claim
from .authoring import Derivation, Section

__version__ = "0.1.0"


def _register_jupyter():
    """In a running IPython shell, show ledgers, claims, sections and derivations as LaTeX."""
    import sys

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
