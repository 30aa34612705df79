"""Finding derivations: the bundled ones, an author's ``derivations/`` folder or file, and selection by name."""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import os
import pkgutil
import signal
import sys
import sysconfig
import threading
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
    if path.is_dir() and not _searched(path) and (path / "derivations").is_dir():
        path = path / "derivations"  # a project folder (``symseq new`` writes its conftest.py beside derivations/)
    return _searched(path) if path.is_dir() else [path]


def _searched(folder: Path) -> list[Path]:
    """The module files of ``folder`` searched for derivations: every ``*.py`` but helpers (a leading ``_``) and
    pytest's ``conftest.py``."""
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_") and p.name != "conftest.py")


def _no_derivation(f) -> ClaimError:
    return ClaimError(
        f"{f} defines no Derivation; a derivation module needs a module-level "
        f"`derivation = Derivation(...)` (name helper modules with a leading _ so they are not searched)"
    )


def from_path(path: str | Path) -> list[Derivation]:
    """Derivations defined in a module file, in every ``*.py`` of a folder (an author's ``derivations/``),
    or in the ``derivations/`` folder inside the given project folder.

    Modules whose names start with ``_`` are helpers and are not searched, nor is pytest's ``conftest.py``.

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
    with interrupts_noted() as interrupts:
        try:
            spec.loader.exec_module(module)
        except SymseqError:
            del sys.modules[modname]
            raise
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # an author's module that does not import, or
            del sys.modules[modname]                                # exits: say where
            if isinstance(exc, KeyboardInterrupt) and interrupts.real:
                raise
            tb = traceback.extract_tb(exc.__traceback__)
            line = getattr(exc, "lineno", None) or next((fr.lineno for fr in reversed(tb) if fr.filename == str(f)),
                                                        "?")
            why = {SystemExit: f"the module called sys.exit({getattr(exc, 'code', None)!r})",
                   KeyboardInterrupt: "the module raised KeyboardInterrupt (no Ctrl-C was pressed)"}
            text = next((t for kind, t in why.items() if isinstance(exc, kind)), str(exc))
            raise ClaimError(f"cannot load {f} (line {line}): {type(exc).__name__}: {text}") from exc
    return module


class _Interrupts:
    """What :func:`interrupts_noted` saw: whether a KeyboardInterrupt may have come from a real Ctrl-C."""

    def __init__(self, watched: bool):
        self.watched = watched  # SIGINT's handler is ours (or SIGINT is ignored): a real Ctrl-C is noted
        self.signalled = False

    @property
    def real(self) -> bool:
        """True when a SIGINT arrived, or when it could not be watched (then every KeyboardInterrupt is taken for
        a real Ctrl-C, as before)."""
        return self.signalled or not self.watched


@contextlib.contextmanager
def interrupts_noted():
    """Note whether a real Ctrl-C (SIGINT) arrives while an author's code runs, so that a KeyboardInterrupt the code
    raises itself is an error of that code, and a real Ctrl-C still stops the run.

    In the main thread with Python's own SIGINT handler, a handler that notes the signal and then calls Python's
    (which raises KeyboardInterrupt) is put in place for the duration, and Python's put back after. Where SIGINT
    is ignored (a worker process of ``symseq verify -j N``) no Ctrl-C can arrive; elsewhere (another thread,
    another handler) nothing is changed and every KeyboardInterrupt counts as real. Yields an object whose
    ``real`` says which it was."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if in_main else None
    if previous is signal.SIG_IGN:
        yield _Interrupts(True)
        return
    if previous is not signal.default_int_handler:
        yield _Interrupts(False)
        return
    noted = _Interrupts(True)

    def note(signum, frame):
        noted.signalled = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)


def section_error(exc: BaseException, fn) -> tuple[str, tuple[str, int] | None]:
    """(the error text of a section whose builder ``fn`` raised ``exc``, (file, line) of the author's code that
    raised it).

    The text's first line is ``FILE:LINE: Type: message`` (the file relative to the working folder when inside
    it), the place being the innermost frame of the author's code: the builder's own module, or any file outside
    symseq and the installed libraries (a helper module of the author's); for an error that is not symseq's, the
    trace follows (shown with ``--traceback``). sys.exit and a KeyboardInterrupt raised by the code (no Ctrl-C
    pressed) say that a section may not end the run."""
    at = _author_frame(exc, getattr(getattr(fn, "__code__", None), "co_filename", None))
    place = f"{_shown(at[0])}:{at[1]}: " if at else ""
    if isinstance(exc, SystemExit):
        text = (f"SystemExit: the section called sys.exit({exc.code!r}); a section may not end the program (raise "
                f"an exception, or state the claim)")
    elif isinstance(exc, KeyboardInterrupt):
        text = ("KeyboardInterrupt: the section raised KeyboardInterrupt, and no Ctrl-C was pressed; a section may "
                "not stop the run (raise another exception, or state the claim)")
    else:
        text = f"{type(exc).__name__}: {exc}"
    trace = "" if isinstance(exc, SymseqError) else "\n" + "".join(traceback.format_exception(exc, limit=-8))
    return place + text + trace, at


def _library_folders() -> tuple[str, ...]:
    """symseq's package folder and the folders of the standard library and installed packages."""
    folders = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            folders.add(os.path.abspath(path))
    return tuple(f.rstrip(os.sep) + os.sep for f in folders)


def _author_frame(exc: BaseException, own: str | None) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of ``exc``'s traceback in the author's code (``own``, the builder's
    file, or a file outside :func:`_library_folders`); None when there is none."""
    libraries = _library_folders()
    found = None
    for fr in traceback.extract_tb(exc.__traceback__):
        name = os.path.abspath(fr.filename)
        if fr.filename == own or (not name.startswith(libraries) and not fr.filename.startswith("<")):
            found = (fr.filename, fr.lineno)
    return found


def _shown(file: str) -> str:
    """``file`` relative to the working folder when inside it, else as it is."""
    try:
        return Path(file).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return file


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
