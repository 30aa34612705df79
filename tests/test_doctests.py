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
