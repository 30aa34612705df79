"""Shared test setup: torch on one thread (shared, noisy machines), a fixed terminal
width (rich wraps tables and pytest truncates its summary to the terminal), seeded
randomness."""

import os

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")


@pytest.fixture(autouse=True)
def _mpmath_precision():
    """A test that sets mpmath's global precision (mp.dps = 30) does not leak it into the next test."""
    import mpmath

    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the torch tests skip themselves
    torch = None


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
