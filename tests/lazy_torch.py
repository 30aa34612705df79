"""torch for test modules, imported when a test first uses it, so that collecting the tests imports no torch.

``from lazy_torch import F, torch, needs_torch``: ``torch.tensor(...)`` imports torch (on one thread) at its first
use, and ``F`` stands for ``torch.nn.functional``; ``needs_torch`` skips a test (or, as ``pytestmark``, a module)
where torch is not installed, found without importing it."""

import importlib
import importlib.util

import pytest

AVAILABLE = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not AVAILABLE, reason="needs torch (pip install 'symseq[torch]')")


def load():
    """torch itself, imported now, with one intra-op thread."""
    module = importlib.import_module("torch")
    if module.get_num_threads() != 1:
        module.set_num_threads(1)
    return module


class _Lazy:
    """Stands for a module of torch (``torch``, ``torch.nn.functional``); each attribute is looked up on that
    module, torch being imported at the first one."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name):
        if name.startswith("_"):  # what pytest asks of every module attribute while collecting (a fixture mark)
            raise AttributeError(name)
        load()
        return getattr(importlib.import_module(self._path), name)

    def __repr__(self):
        return f"<{self._path}, imported at its first use>"


torch = _Lazy("torch")
F = _Lazy("torch.nn.functional")
