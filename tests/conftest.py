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


try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the torch tests skip themselves
    torch = None


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
