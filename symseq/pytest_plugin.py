"""pytest plugin: every claim of an author's derivations is a test item, so ``pytest`` shows one failure per erratum.

Registered through the ``pytest11`` entry point (``symseq = "symseq.pytest_plugin"``),
so installing symseq is enough. In a project whose root folder holds a
``derivations/`` folder, ``pytest`` collects, for every module of that folder
(modules whose names start with ``_`` are helpers), one item per claim of each
derivation it defines, grouped as the claim's id reads: the derivation, then the
section, then the claim::

    derivations/week08_mine.py::week08-mine::§4 The forward pass by hand::p(B|AB)

Every part of that node id is a pytest-safe name (:func:`node_name`): never a
``::`` or a bracket inside a name (a bracket becomes a parenthesis, ``E[A]`` →
``E(A)``), nor a colon at either end (``Step 2:`` → ``Step 2``), so the id that
``pytest --collect-only -q`` and ``pytest -v`` print, whatever dots, colons,
brackets and spaces the titles hold, pasted back as ``pytest 'derivations/
week08_mine.py::week08-mine::§4 The forward pass by hand::p(B|AB)'``, runs that
one claim (``pytest -v`` prints the id itself: an item's report title, the
claim's readable id, starts ``[claim]`` so that pytest does not rewrite the
dots of the id it ends as "::"), a section or a derivation id runs
its claims, ``--lf``/``--ff`` rerun the claims that failed last, and ``-k``
selects by any word of a derivation, section or claim name (``-k "forward and
loss"``). A claim is named by its place within the section and what it is
(``Table 13, row 0: a · A``), or by its printed statement when it names neither;
a second claim of the same name in a section is ``NAME (2)``. Names depend only on
the derivation's text, so every pytest-xdist worker (``pytest -n 2``) collects
the same items in the same order.

An item fails with the claim's report (printed, correct rounding, value, error in
units of the last digit), headed by the file and line of the derivation module
that states the claim: ``derivations/week08_mine.py:23: claim 'p(B|AB)' …``
(:meth:`ClaimItem.reportinfo` gives the same place, 0-based, to pytest). An item
is skipped when the claim is (for instance when it needs torch and torch is
missing). A section that fails to build, or is not checked, is one item named
``build`` in that section; a section that fails does so with its error headed by
the file and line of the author's code that raised it (``derivations/mine.py:17:
NameError: name 'h' is not defined``), whether the error is an exception,
``sys.exit`` or a KeyboardInterrupt the code raised itself.

Nothing else changes: symseq's own bundled ``derivations/`` folder is never
collected as a folder (one of its modules named on the command line is: ``pytest
derivations/week08_decoder.py::week08-decoder`` in symseq's repository), nor is
anything when ``--no-symseq`` is given. ``--symseq-derivations
DIR`` collects another folder as well (it must be inside the paths pytest
visits, or be passed to pytest as an argument). When a project's ``testpaths``
leave ``derivations/`` out, run ``pytest derivations`` to check the claims.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

BUILD = "build"
"""The name of the one item of a section that fails to build or is not checked."""

NAME_LENGTH = 80
"""The longest item name made from a printed statement (longer ones end in "…")."""


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


def _derivation_module(file_path: Path, config) -> bool:
    return (file_path.suffix == ".py" and not file_path.name.startswith("_")
            and file_path.parent.resolve() in _folders(config))


def _python_collects(file_path: Path, session) -> bool:
    """Whether pytest's own Python plugin asks for a module collector of ``file_path`` (a file named on the command
    line, or one matching ``python_files``): then :func:`pytest_pycollect_makemodule` answers for it."""
    patterns = session.config.getini("python_files")
    return session.isinitpath(file_path) or any(fnmatch.fnmatch(file_path.name, p) for p in patterns)


def pytest_collect_file(file_path, parent):
    if not _derivation_module(file_path, parent.config) or _python_collects(file_path, parent.session):
        return None
    return DerivationFile.from_parent(parent, path=file_path)


def _named_bundled_module(file_path: Path, session) -> bool:
    """A module of symseq's bundled folder named on the command line (``pytest derivations/week08_decoder.py::…``
    in symseq's own repository): collected although the folder is not."""
    return (file_path.suffix == ".py" and not file_path.name.startswith("_")
            and not session.config.getoption("no_symseq") and file_path.parent.resolve() in _bundled_folders()
            and session.isinitpath(file_path))


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    """A derivation module named on the command line (``pytest derivations/x.py::...``) is collected as one, not
    also imported as a test module."""
    if _derivation_module(module_path, parent.config) or _named_bundled_module(module_path, parent.session):
        return DerivationFile.from_parent(parent, path=module_path)
    return None


_UNSAFE = re.compile(r"\s+|::")


def node_name(text: str) -> str:
    """``text`` as one part of a pytest node id: no ``::`` (pytest's separator), no bracket (pytest reads
    ``[...]`` as parameters) and no colon at either end (``Step 2:`` followed by the separator would read
    ``Step 2:::x``, which pytest splits as ``Step 2`` and ``:x``), whitespace collapsed: ``"E[A]"`` → ``"E(A)"``,
    ``"a::b"`` → ``"a: b"``, ``"Step 2:"`` → ``"Step 2"``."""
    text = text.replace("[", "(").replace("]", ")")
    text = " ".join(_UNSAFE.sub(lambda m: ": " if m.group(0) == "::" else " ", text).split())
    return text.strip(": ") or "claim"


def title(kind: str, readable_id: str) -> str:
    """An item's report title (pytest's "domain": the head of its failure report): ``[claim] week08-mine::§4 …``.
    It holds a bracket, which no node id holds, so it never ends a node id: ``pytest -v`` shows an id that ends
    with its item's title with the title's dots as "::" (``1. One tanh step`` as ``1:: One tanh step``), which
    does not paste back."""
    return f"[{kind}] {readable_id}"


def claim_name(claim) -> str:
    """The item name of a claim within its section: ``at · what`` (either alone when the other is empty), or
    the printed statement (at most :data:`NAME_LENGTH` characters) when it names neither."""
    parts = [p for p in (claim.location.at, claim.what) if p]
    if parts:
        return node_name(" · ".join(parts))
    name = node_name(claim.printed)
    return name if len(name) <= NAME_LENGTH else name[:NAME_LENGTH - 1].rstrip() + "…"


def _unique(names) -> list[str]:
    """``names`` with the second and later of a repeated name numbered: ``w``, ``w (2)``, ``w (3)``."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


class DerivationFile(pytest.File):
    """A derivation module of the project: one collector per derivation it defines."""

    def collect(self):
        from symseq.authoring import from_path

        derivations = from_path(self.path)
        for d, name in zip(derivations, _unique(node_name(d.name) for d in derivations)):
            yield DerivationNode.from_parent(self, name=name, derivation=d)

    def repr_failure(self, excinfo):
        """A module that does not load, or defines no derivation: symseq's one-line reason (the file and line),
        not a traceback through symseq's loader."""
        from symseq.errors import SymseqError

        if isinstance(excinfo.value, SymseqError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class DerivationNode(pytest.Collector):
    """One derivation: one collector per section, in the derivation's order."""

    def __init__(self, *, derivation, **kwargs):
        super().__init__(**kwargs)
        self.derivation = derivation

    def collect(self):
        sections = self.derivation.sections  # builds them: the claims are known only then
        for s, name in zip(sections, _unique(node_name(s.title) for s in sections)):
            yield SectionNode.from_parent(self, name=name, section=s)

    def reportinfo(self):
        return self.path, None, title("derivation", self.derivation.name)


class SectionNode(pytest.Collector):
    """One section: an item per claim, or one item ``build`` when the section did not build or is not checked."""

    def __init__(self, *, section, **kwargs):
        super().__init__(**kwargs)
        self.section = section

    def collect(self):
        s = self.section
        if s.error or s.skipped:
            yield SectionItem.from_parent(self, name=BUILD, section=s)
        for c, name in zip(s.claims, _unique(claim_name(c) for c in s.claims)):
            yield ClaimItem.from_parent(self, name=name, claim=c)

    def reportinfo(self):
        return self.path, None, title("section", f"{self.section.derivation.name}::{self.section.title}")


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
            where = _place(self.config, *self.reportinfo()[:2])
            raise ClaimFailed(f"{where}: claim {self.name!r}: {describe(self.claim)}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        """(file, 0-based line, title): the line of the derivation module that states the claim (the module itself
        when the claim does not know it), and the claim's readable id as its :func:`title`."""
        if self.claim.written is None:
            return self.path, None, title("claim", self.claim.id)
        file, line = self.claim.written
        return Path(file), line - 1, title("claim", self.claim.id)


class SectionItem(pytest.Item):
    """A section that did not build (its error), or was skipped for a missing optional package."""

    def __init__(self, *, section, **kwargs):
        super().__init__(**kwargs)
        self.section = section

    def runtest(self):
        if self.section.skipped:
            pytest.skip(self.section.skipped)
        error = self.section.error.splitlines()[0]
        if getattr(self.section, "error_at", None):  # the error begins with the author's file and line
            raise ClaimFailed(f"{error} (section {self.section.title!r} did not build)")
        raise ClaimFailed(f"{_place(self.config, self.path, None)}: section {self.section.title!r} did not build: "
                          f"{error}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ClaimFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        """(file, 0-based line, title): the author's line that raised the section's error, when known."""
        name = title("section", f"{self.section.derivation.name}::{self.section.title}")
        at = getattr(self.section, "error_at", None)
        return (Path(at[0]), at[1] - 1, name) if at else (self.path, None, name)


def _place(config, path, line) -> str:
    """``file:line`` (1-based) as a failure report shows it: relative to pytest's root folder when inside it."""
    path = Path(path)
    try:
        shown = path.resolve().relative_to(Path(str(config.rootpath)).resolve()).as_posix()
    except ValueError:
        shown = str(path)
    return shown if line is None else f"{shown}:{line + 1}"
