"""Shared test setup: torch on one thread (shared, noisy machines), seeded randomness."""

import os

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # the torch tests skip themselves
    torch = None


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
