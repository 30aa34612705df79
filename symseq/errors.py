"""The one exception family of symseq.

Every error a user can meet derives from :class:`SymseqError`, states the
invariant that failed, what was received, and how to fix it. The CLI prints
these messages without a traceback.
"""

from __future__ import annotations


class SymseqError(Exception):
    """Base class of every error symseq raises on purpose."""


class ShapeError(SymseqError, ValueError):
    """Operand shapes do not fit an operation (names both shapes and the operation)."""


class ConventionError(SymseqError, ValueError):
    """An unknown convention or option, or a value that would silently lose exactness."""


class MaskError(SymseqError, ValueError):
    """A mask entry that is no value of its convention (names the entry and its value), or a mask that leaves a
    query position (or a pooled sequence) with no allowed source."""


class VocabularyError(SymseqError, KeyError):
    """A token is not in the declared vocabulary (names the token, its position and the vocabulary size)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class EvaluationError(SymseqError, ArithmeticError):
    """A row evaluated to a non-finite or undefined value (names the row and entry)."""


class LedgerError(SymseqError, KeyError):
    """A name is missing from a ledger, defined twice, or used before it is defined."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ClaimError(SymseqError, ValueError):
    """A claim cannot be stated: its printed string does not parse, or its value is unusable."""


class NotRealError(ClaimError):
    """A printed statement computes a value that is not a real number: a division by zero, the logarithm of a
    number ≤ 0, the square root of a negative number, a negative base to a non-integer power. The page's
    arithmetic (:mod:`symseq.audit.arithmetic`) reports such a statement as one that cannot hold."""


class AuditError(SymseqError, ValueError):
    """A handout cannot be audited: a missing or unreadable file, a format that cannot be read (a notebook that is
    not JSON or of an nbformat version nbformat does not read), no derivation for it. The CLI exits 2."""


class ClaimMismatch(SymseqError, AssertionError):
    """A claim's printed value disagrees with the exact value (raised by ``Claim.assert_ok``)."""


class BackendUnavailable(SymseqError, ImportError):
    """An optional backend or device is missing (names the extra to install or the device to use)."""


# the extra of symseq (pyproject.toml) that installs each optional package
EXTRAS = {"torch": "torch", "numba": "numba", "matplotlib": "figures"}


# how to install an optional package without symseq's extra, where a bare ``pip install package`` is not it
_ALONE = {"torch": "torch alone, its CPU build: pip install torch --index-url https://download.pytorch.org/whl/cpu"}


def install_hint(package: str) -> str:
    """``pip install 'symseq[torch]'`` for an optional package of :data:`EXTRAS`, else ``pip install 'package'``."""
    return f"pip install 'symseq[{EXTRAS[package]}]'" if package in EXTRAS else f"pip install '{package}'"


def import_optional(package: str, *, needed_by: str, otherwise: str, label: str = ""):
    """Import the optional ``package`` (torch, numba, matplotlib) and return the module.

    Raises:
        BackendUnavailable: when it is not installed: "``needed_by`` needs ``label`` (the package), which is not
            installed: pip install 'symseq[extra]' (or pip install package); ``otherwise``".
    """
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        also = f" (or {_ALONE.get(package, f'pip install {package}')})" if package in EXTRAS else ""
        raise BackendUnavailable(f"{needed_by} needs {label or package}, which is not installed: "
                                 f"{install_hint(package)}{also}; {otherwise}") from exc


class PrecisionWarning(UserWarning):
    """Numbers meet a precision that does not hold them: a check ran at another precision than the data it was
    given (float32 values checked in float64, floats given to mpmath), or exact inputs are distinct but a backend
    converts them to the same number (3·10⁸⁴ + 1 and 3·10⁸⁴ − 1 in float64 or at 50 digits:
    :func:`symseq.ledger.warn_indistinct`), so what depends on their difference is lost there."""


class FileSystemError(SymseqError, OSError):
    """The operating system refused to read or write a file: a folder that cannot be created or written, a
    file that cannot be read, a full disk (names the path and the system's reason). The CLI exits 3 for it, as
    for a missing package (:class:`BackendUnavailable`): the environment, not the input, is at fault."""
