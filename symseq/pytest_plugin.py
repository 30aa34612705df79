"""pytest plugin: every claim of an author's derivations is a test item, so ``pytest`` shows one failure per erratum.

Registered through the ``pytest11`` entry point (``symseq = "symseq.pytest_plugin"``),
so installing symseq is enough. In a project whose root folder holds a
``derivations/`` folder, ``pytest`` collects, for every module of that folder
(modules whose names start with ``_`` are helpers), one item per claim of each
derivation it defines. An item's id is the claim's: ``derivation::location``
(followed by ``::what`` when the claim names what it is), e.g.
``week08-mine::§4 The forward pass by hand::p(B|AB)``. An item fails with the
claim's report (printed, correct rounding, value, error in units of the last
digit) when the claim does not hold, and is skipped when the claim is (for
instance when it needs torch and torch is missing). A section that fails to
build is one failing item.

Nothing else changes: symseq's own bundled ``derivations/`` folder is never
collected, nor is any folder when ``--no-symseq`` is given. ``--symseq-derivations
DIR`` collects another folder as well (it must be inside the paths pytest
visits, or be passed to pytest as an argument). When a project's ``testpaths``
leave ``derivations/`` out, run ``pytest derivations`` to check the claims.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("symseq", "symseq: one test per claim of the project's derivations")
    group.addoption("--no-symseq", action="store_true", default=False,
                    help="do not collect the claims of ./derivations as tests")
    group.addoption("--symseq-derivations", action="append", default=[], metavar="DIR",
                    help="also collect the claims of the derivation modules in DIR (repeatable)")


def _folders(config) -> set:
    cached = getattr(config, "_symseq_folders", None)
    if cached is not None:
        return cached
    folders = set()
    if not config.getoption("no_symseq"):
        candidates = [Path(str(config.rootpath)) / "derivations"]
        candidates += [Path(p) for p in config.getoption("symseq_derivations")]
        bundled = _bundled_folders()
        for c in candidates:
            if c.is_dir() and c.resolve() not in bundled:
                folders.add(c.resolve())
    config._symseq_folders = folders
    return folders


def _bundled_folders() -> set:
    try:
        import symseq.derivations as pkg
    except ImportError:  # pragma: no cover - a broken installation
        return set()
    return {Path(p).resolve() for p in pkg.__path__}


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".py" or file_path.name.startswith("_"):
        return None
    if file_path.parent.resolve() not in _folders(parent.config):
        return None
    return DerivationFile.from_parent(parent, path=file_path)


class DerivationFile(pytest.File):
    """A derivation module of the project: one item per claim of each derivation it defines."""

    def collect(self):
        from symseq.authoring import from_path

        seen: dict[str, int] = {}
        for d in from_path(self.path):
            for s in d.sections:
                if s.error or s.skipped:
                    yield SectionItem.from_parent(self, name=f"{d.name}::{s.title}", section=s)
                for c in s.claims:
                    name = c.id
                    seen[name] = seen.get(name, 0) + 1
                    if seen[name] > 1:
                        name = f"{name} [{seen[name]}]"
                    yield ClaimItem.from_parent(self, name=name, claim=c)


class ClaimFailed(AssertionError):
    """A claim that does not hold (its report is the message)."""


class ClaimItem(pytest.Item):
    """One claim: passes when it holds, fails with its report, skips when the claim is skipped."""

    def __init__(self, *, claim, **kwargs):
        super().__init__(**kwargs)
        self.claim = claim

    def runtest(self):
        from symseq.verify.claims import describe

        r = self.claim.check()
        if r.status == "skipped":
            pytest.skip(r.message)
        if r.status != "ok":
            raise ClaimFailed(describe(self.claim))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"{self.claim.source} {self.claim.location}"


class SectionItem(pytest.Item):
    """A section that did not build (its error), or was skipped for a missing optional package."""

    def __init__(self, *, section, **kwargs):
        super().__init__(**kwargs)
        self.section = section

    def runtest(self):
        if self.section.skipped:
            pytest.skip(self.section.skipped)
        raise ClaimFailed(f"section {self.section.title!r} did not build: {self.section.error.splitlines()[0]}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, self.name
