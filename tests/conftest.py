"""Shared test setup: torch on one thread (shared, noisy machines), a fixed terminal
width (rich wraps tables and pytest truncates its summary to the terminal), seeded
randomness, and a cache folder of the session's own.

Collecting the tests imports no torch and builds no derivation: torch is imported by the
tests that use it (``lazy_torch``), and the bundled derivations are built, once per
session, by the first test that asks for them (the ``built`` fixture)."""

import itertools
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _one_torch_thread():
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "set_num_threads", None) and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


_COLLECTED_WITH = pytest.StashKey[frozenset]()
HEAVY = ("torch", "numba", "jax")  # not imported while collecting; the tests that use them import them


def pytest_collection_finish(session):
    session.config.stash[_COLLECTED_WITH] = frozenset(m for m in HEAVY if m in sys.modules)


@pytest.fixture(scope="session")
def imported_by_collection(request) -> frozenset:
    """Which of :data:`HEAVY` were imported once the tests were collected (none, in this process)."""
    return request.config.stash.get(_COLLECTED_WITH, frozenset())


def pytest_runtest_setup(item):
    """torch on one thread once some test (or symseq) has imported it; collection never imports it."""
    _one_torch_thread()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test (its fixtures included) numbers the helper rows of symseq's Jacobians from 0, as a fresh process
    does: the names symseq.derive.symbolic.fresh gives (Ḡ_{0}, ℓ_{1}) come from one counter per process, so a
    bundled derivation built after another test's proofs would print ℓ_{19} where ``symseq latex`` prints ℓ_{1}."""
    symbolic = sys.modules.get("symseq.derive.symbolic")
    counter = getattr(symbolic, "_COUNTER", None)
    if counter is not None:
        symbolic._COUNTER = itertools.count()
    try:
        yield
    finally:
        if counter is not None:
            symbolic._COUNTER = counter


@pytest.fixture(scope="session", autouse=True)
def _symseq_cache_dir(tmp_path_factory):
    """symseq's cache of built derivations goes to a folder of this session, never the user's cache folder; the
    ``symseq`` commands the tests run as subprocesses inherit it."""
    before = os.environ.get("SYMSEQ_CACHE_DIR")
    os.environ["SYMSEQ_CACHE_DIR"] = str(tmp_path_factory.mktemp("symseq-cache"))
    yield
    if before is None:
        os.environ.pop("SYMSEQ_CACHE_DIR", None)
    else:
        os.environ["SYMSEQ_CACHE_DIR"] = before


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


@pytest.fixture(scope="session")
def torch():
    """torch itself (on one thread), for a test that takes it as an argument; skips the test without torch."""
    torch = pytest.importorskip("torch")
    _one_torch_thread()
    return torch


@pytest.fixture(scope="session")
def built():
    """The bundled derivations, built once per session (their sections and claims), by name."""
    from symseq.authoring import bundled

    ds = bundled()
    for d in ds:
        d.sections  # noqa: B018 - builds the sections
    return {d.name: d for d in ds}


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)
