"""Finding derivations: the bundled ones, an author's ``derivations/`` folder or file, and selection by name."""

from __future__ import annotations

import difflib

import importlib
import importlib.util
import pkgutil
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..errors import ClaimError, SymseqError

if TYPE_CHECKING:
    from .derivation import Derivation


def _derivations_in(module) -> list[Derivation]:
    from .derivation import Derivation  # not at the top: the catalogue is read without SymPy

    found = [v for v in vars(module).values() if isinstance(v, Derivation)]
    for d in found:
        d.module = module
        d.forget()  # sections adopted by an earlier verify in this process hold no ledgers: build them again
    return found


def bundled() -> list[Derivation]:
    """The derivations shipped with symseq (the project's ``derivations/`` folder)."""
    return [d for name, _ in _bundled_modules() for d in _derivations_in(importlib.import_module(name))]


@dataclass(frozen=True)
class Entry:
    """A derivation as its module's manifest in the cache describes it (:mod:`symseq.cache`): known without
    importing the module, for ``symseq list`` and for finding the derivations whose source is a page.

    Attributes:
        name, title, source, description: the derivation's (:class:`Derivation`).
        sections: how many sections it registers.
        file: its module's file.
        module: the module's dotted name for a bundled derivation, else None (an author's file).
    """

    name: str
    title: str
    source: str
    description: str
    sections: int
    file: str
    module: str | None = None

    def load(self) -> Derivation:
        """The derivation itself (its module imported; its sections not built yet)."""
        return load(self.module, None if self.module else self.file, self.name)


def catalogue(paths: Iterable[str | Path] = (), *, include_bundled: bool = True, cache=None) -> list[Entry]:
    """Every derivation :func:`discover` finds, described by its module's manifest in ``cache`` (a
    :class:`~symseq.cache.Cache`) where one still holds; a module without one is imported (the files it reads
    recorded, :func:`symseq.cache.watching`) and its manifest written. Without a cache every module is imported.

    Raises:
        ClaimError: as :func:`discover` (a path that does not exist, a module that does not import or defines no
            derivation, two derivations of one name).
    """
    from ..cache import project_files, watching

    modules = _bundled_modules() if include_bundled else []
    for p in paths:
        modules.extend((None, f) for f in _module_files(p))
    out = []
    for name, file in modules:
        manifest = cache.manifest(file) if cache is not None else None
        if manifest is None:
            with watching() as seen:
                module = importlib.import_module(name) if name else _load(file)
            found = _derivations_in(module)
            if not found:
                raise _no_derivation(file)
            described = [{"name": d.name, "title": d.title, "source": d.source, "description": d.description,
                          "sections": len(d._builders)} for d in found]
            manifest = {"derivations": described} if cache is None else cache.remember(
                file, described, project_files(seen, module))
        out.extend(Entry(**x, file=str(file), module=name) for x in manifest["derivations"])
    _unique([e.name for e in out])
    return out


def _bundled_modules() -> list[tuple[str, str]]:
    """(dotted name, file) of each module of the bundled derivations, by name."""
    import symseq.derivations as pkg

    out = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            out.append((f"{pkg.__name__}.{info.name}", str(Path(info.module_finder.path) / f"{info.name}.py")))
    return out


def _module_files(path: str | Path) -> list[Path]:
    """The module files :func:`from_path` reads for ``path`` (see there)."""
    path = Path(path)
    if not path.exists():
        raise ClaimError(f"no derivation file or folder at {path}")
    if path.is_dir() and not any(path.glob("*.py")) and (path / "derivations").is_dir():
        path = path / "derivations"
    return sorted(p for p in path.glob("*.py") if not p.name.startswith("_")) if path.is_dir() else [path]


def _no_derivation(f) -> ClaimError:
    return ClaimError(
        f"{f} defines no Derivation; a derivation module needs a module-level "
        f"`derivation = Derivation(...)` (name helper modules with a leading _ so they are not searched)"
    )


def from_path(path: str | Path) -> list[Derivation]:
    """Derivations defined in a module file, in every ``*.py`` of a folder (an author's ``derivations/``),
    or in the ``derivations/`` folder inside the given project folder.

    Modules whose names start with ``_`` are helpers and are not searched.

    Raises:
        ClaimError: when the path does not exist, a module fails to import
            (naming the file and line), or a module defines no Derivation.
    """
    out = []
    for f in _module_files(path):
        found = _derivations_in(_load(f))
        if not found:
            raise _no_derivation(f)
        out.extend(found)
    return out


def load(module: str | None, file: str | None, name: str) -> Derivation:
    """The derivation ``name``, loaded afresh: from the bundled ``module`` (its dotted name) or from an author's
    module ``file`` (what :meth:`Derivation.reloader` calls in a worker process of ``symseq verify -j N``).

    Raises:
        ClaimError: when the module no longer defines a derivation of that name (or does not load: see
            :func:`from_path`).
    """
    found = _derivations_in(importlib.import_module(module)) if module else from_path(file)
    for d in found:
        if d.name == name:
            return d
    raise ClaimError(f"{module or file} no longer defines the derivation {name!r} (was it edited during the run?)")


def _load(f: Path):
    modname = f"symseq_user_derivations.{f.stem}_{abs(hash(str(f.resolve()))) % 10**8}"
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, f)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except SymseqError:
        del sys.modules[modname]
        raise
    except (Exception, SystemExit) as exc:  # an author's module that does not import (or exits): say where
        del sys.modules[modname]
        tb = traceback.extract_tb(exc.__traceback__)
        line = getattr(exc, "lineno", None) or next((fr.lineno for fr in reversed(tb) if fr.filename == str(f)), "?")
        raise ClaimError(f"cannot load {f} (line {line}): {type(exc).__name__}: {exc}") from exc
    return module


def default_paths() -> list[Path]:
    """``./derivations`` when the current folder has one of its own (not symseq's bundled folder)."""
    here = Path.cwd() / "derivations"
    if not here.is_dir():
        return []
    import symseq.derivations as pkg

    bundled_dirs = {Path(p).resolve() for p in pkg.__path__}
    own_tree = (Path.cwd() / "symseq" / "ledger.py").is_file() and (here / "__init__.py").is_file()
    return [] if here.resolve() in bundled_dirs or own_tree else [here]


def discover(paths: Iterable[str | Path] = (), *, include_bundled: bool = True) -> list[Derivation]:
    """Bundled derivations (unless excluded) followed by those found at ``paths`` (with the cache's manifests:
    :func:`catalogue`, then :meth:`Entry.load`)."""
    out = bundled() if include_bundled else []
    for p in paths:
        out.extend(from_path(p))
    _unique([d.name for d in out])
    return out


def _unique(names: list[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ClaimError(f"two derivations share the name(s) {', '.join(dup)}; names must be unique "
                         f"(if a folder holds copies of the bundled derivations, pass --no-bundled)")


def closest(word: str, choices) -> list[str]:
    """The choices closest to a misspelt ``word``, for a "did you mean": those :func:`difflib.get_close_matches`
    finds (similarity 0.6 or more) that are as close as the closest, within 0.05 (at most three, best first)."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=3, cutoff=0.6)
    ratio = [difflib.SequenceMatcher(None, str(word), c).ratio() for c in close]
    return [c for c, r in zip(close, ratio) if r >= ratio[0] - 0.05]


def select(derivations: list[Derivation], names: Iterable[str]) -> list[Derivation]:
    """The derivations named (exactly or by unique prefix); raises ClaimError listing the valid names."""
    names = list(names)
    if not names:
        return derivations
    by = {d.name: d for d in derivations}
    out = []
    for n in names:
        if n in by:
            out.append(by[n])
            continue
        hits = [d for d in derivations if d.name.startswith(n) or d.source.startswith(n)]
        if len(hits) == 1:
            out.append(hits[0])
        elif hits:
            raise ClaimError(f"{n!r} matches several of the derivations: {', '.join(sorted(d.name for d in hits))}; "
                             f"give more of the name")
        else:
            close = closest(n, sorted(by))
            hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
            raise ClaimError(f"{n!r} matches none of the derivations; {hint}valid names: "
                             f"{', '.join(sorted(by)) or 'none'}")
    return out
