"""The examples in the public API's docstrings run and print what they say."""

import doctest
import importlib

import pytest

PUBLIC = ["symseq.ledger", "symseq.numbers", "symseq.values", "symseq.backends", "symseq.backends.compiled",
          "symseq.blocks.masks"]


@pytest.mark.parametrize("name", PUBLIC)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


def test_help_renders_every_module_of_the_package():
    """``help(module)`` works on every module of symseq: pydoc renders each (an undefined SymPy function such as
    ``bptt.PHI`` has no module of its own until it is given one, and pydoc failed on it with a TypeError)."""
    import importlib
    import pkgutil
    import pydoc

    import symseq

    failed = []
    for info in pkgutil.walk_packages(symseq.__path__, "symseq."):
        if "torch" in info.name or "numba" in info.name:
            continue  # optional backends: their imports are tested where they are installed
        try:
            pydoc.render_doc(importlib.import_module(info.name), renderer=pydoc.plaintext)
        except Exception as exc:  # noqa: BLE001 - every failure is listed
            failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
    assert failed == []
