"""Derivations decided once, kept between runs: the cache of ``symseq verify``, ``symseq list`` and ``symseq audit``.

An author who changes one line of one derivation should not wait for every other derivation to be built again.
The cache keeps, in the user's cache folder (``platformdirs``: ``~/.cache/symseq`` on Linux, or the folder named by
the environment variable ``SYMSEQ_CACHE_DIR``), two kinds of entry:

* a **manifest** for each derivation module file: the derivations it defines (name, title, source, description,
  number of sections) and the files it depends on, with their SHA-256; ``symseq list`` and ``symseq audit`` of a
  page no derivation claims read these instead of importing the modules;
* the **decided sections** of each page (the derivations with one ``source``) at one working precision: what a
  worker process of ``symseq verify -j N`` sends back (:meth:`~symseq.authoring.Section.detach`), with the page's
  causes; ``symseq verify`` adopts them instead of building.

What an entry is keyed on, so that it can never be stale:

* the module's own text (SHA-256 of its bytes);
* every file of the author's project the module reads while it is imported and its sections are built (helper
  modules, data files: recorded by an audit hook, :func:`watching`), and the module of every object its
  namespace holds (a helper imported earlier by another module), each with its SHA-256;
* symseq's own source (every ``.py`` and ``.json`` file of the installed package);
* the Python version and the installed SymPy, mpmath, NumPy, gmpy2 and torch (where each is installed, and the
  modification time of its ``__init__.py``: a reinstall changes it), and the working precision.

Any change to any of these misses the cache and builds afresh; a missing, unreadable or damaged entry is a miss,
never an error. ``--no-cache`` (or ``SYMSEQ_NO_CACHE=1``, or :class:`Cache` ``(enabled=False)``) neither reads nor
writes it. The cache holds at
most :data:`KEEP` decided pages; the oldest are removed first. Entries are pickles written by this user's own runs:
a cache folder others can write to is as unsafe as their write access to your derivations.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import pickle
import sys
import sysconfig
import tempfile
from pathlib import Path

ENV = "SYMSEQ_CACHE_DIR"
"""The environment variable naming the cache folder (default: the user's cache folder, ``platformdirs``)."""

OFF_ENV = "SYMSEQ_NO_CACHE"
"""The environment variable that, set to anything but an empty string, turns the cache off as ``--no-cache`` does."""

KEEP = 64
"""The most decided pages kept; storing one more removes the least recently written."""

FORMAT = 1  # the layout of the entries below; a change of it starts a new folder
LIBRARIES = ("sympy", "mpmath", "numpy", "gmpy2", "torch")


def folder() -> Path:
    """The cache folder: ``$SYMSEQ_CACHE_DIR``, else the user's cache folder for symseq."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    import platformdirs

    return platformdirs.user_cache_path("symseq")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha(path: str | Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it cannot be read (gone, a folder, refused)."""
    try:
        return _sha(Path(path).read_bytes())
    except OSError:
        return None


_PACKAGE = Path(__file__).resolve().parent
_ENVIRONMENT: str | None = None


def environment() -> str:
    """One digest of what every entry depends on besides the author's files: symseq's source, Python's version and
    the numerical libraries installed (computed once per process)."""
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        h = hashlib.sha256(f"format {FORMAT}; python {sys.version}".encode())
        for f in sorted(p for p in _PACKAGE.rglob("*") if p.suffix in (".py", ".json") and "__pycache__" not in p.parts):
            h.update(f.relative_to(_PACKAGE).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
        for name in LIBRARIES:
            spec = importlib.util.find_spec(name)
            origin = getattr(spec, "origin", None)
            stamp = os.stat(origin).st_mtime_ns if origin and os.path.exists(origin) else None
            h.update(f"{name} {origin} {stamp}\0".encode())
        _ENVIRONMENT = h.hexdigest()
    return _ENVIRONMENT


# -- which files a module reads ------------------------------------------------------------------------------------

_WATCHES: list[set] = []  # the files opened while each active watch runs
_HOOKED = False


def _hook(event: str, args) -> None:
    if event == "open" and _WATCHES:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)) and (args[1] is None or "r" in str(args[1])):
            for seen in _WATCHES:
                seen.add(os.fsdecode(path))


@contextlib.contextmanager
def watching():
    """Record the files this process opens for reading while the block runs (imports included: the import system
    reads a module's source or bytecode through ``open``); yields the set they are added to."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_hook)  # a hook cannot be removed: it does nothing while no watch is active
        _HOOKED = True
    seen: set = set()
    _WATCHES.append(seen)
    try:
        yield seen
    finally:
        _WATCHES.remove(seen)


def _installed_roots() -> tuple[str, ...]:
    """The folders whose files are not the author's: Python's own library, the environment's (its scripts and
    installed packages, keyed by :func:`environment`), and the system's views of processes and devices."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib", "scripts") if k in paths}
    roots |= {sys.prefix, sys.base_prefix, sys.exec_prefix, "/proc", "/sys", "/dev"}
    roots |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
    return tuple(sorted(str(Path(r).resolve()) + os.sep for r in roots if r))


def project_files(paths, module=None) -> dict[str, str]:
    """{file: SHA-256} of the author's files among ``paths`` (files opened, :func:`watching`) and among the modules
    of the objects ``module``'s namespace holds: Python's library, installed packages (symseq included) and the
    cache folder itself are left out; bytecode stands for its source file."""
    files = set(paths)
    if module is not None:
        for value in list(vars(module).values()):
            owner = value if isinstance(value, type(sys)) else sys.modules.get(getattr(value, "__module__", None) or "")
            if getattr(owner, "__file__", None):
                files.add(owner.__file__)
    roots = _installed_roots() + (str(_PACKAGE) + os.sep, str(folder().resolve()) + os.sep)
    out = {}
    for f in files:
        if "__pycache__" in f:
            with contextlib.suppress(ValueError, NotImplementedError):
                f = importlib.util.source_from_cache(f)
        p = Path(f).resolve()
        if str(p).startswith(roots) or not p.is_file():
            continue
        sha = file_sha(p)
        if sha is not None:
            out[str(p)] = sha
    return out


# -- the cache ------------------------------------------------------------------------------------------------------

class Cache:
    """The on-disk cache of derivation manifests and decided pages (see the module docstring).

    Args:
        root: the cache folder (default :func:`folder`).
        enabled: False for a cache that never reads or writes (``--no-cache``); by default it is on unless the
            environment variable ``SYMSEQ_NO_CACHE`` is set (:data:`OFF_ENV`).
    """

    def __init__(self, root: str | Path | None = None, *, enabled: bool | None = None):
        self.enabled = not os.environ.get(OFF_ENV) if enabled is None else bool(enabled)
        self.root = (Path(root) if root is not None else folder()) / f"v{FORMAT}"

    def __repr__(self) -> str:
        return f"Cache({str(self.root)!r}{'' if self.enabled else ', disabled'})"

    # -- manifests
    def _manifest_path(self, file: str | Path) -> Path:
        return self.root / "modules" / (_sha(str(Path(file).resolve()).encode())[:32] + ".json")

    def manifest(self, file: str | Path) -> dict | None:
        """The manifest of the module at ``file`` when it still holds (the module, every file it depends on and
        the environment unchanged), else None."""
        if not self.enabled:
            return None
        try:
            m = json.loads(self._manifest_path(file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(m, dict) or m.get("environment") != environment() or m.get("file") != str(
                Path(file).resolve()) or m.get("sha") != file_sha(file):
            return None
        deps = m.get("deps")
        if not isinstance(deps, dict) or any(file_sha(p) != sha for p, sha in deps.items()):
            return None
        return m

    def remember(self, file: str | Path, derivations: list[dict], deps: dict[str, str]) -> dict:
        """Write (or widen) the manifest of the module at ``file``: the derivations it defines (``name``,
        ``title``, ``source``, ``description``, ``sections``) and ``deps`` ({file: SHA-256}, added to those already
        recorded for the same module text); returns it."""
        file = str(Path(file).resolve())
        m = {"file": file, "sha": file_sha(file), "environment": environment(), "derivations": derivations,
             "deps": dict(deps)}
        old = self.manifest(file)  # one that still holds is of this module text: its files are kept
        if old is not None:
            m["deps"] = {**old["deps"], **m["deps"]}
        if self.enabled:
            self._write(self._manifest_path(file), json.dumps(m, indent=1, sort_keys=True).encode())
        return m

    @staticmethod
    def module_key(manifest: dict) -> str:
        """The digest of a module's manifest that a decided page is keyed on."""
        return _sha(json.dumps([manifest["file"], manifest["sha"], manifest["environment"],
                                sorted(manifest["deps"].items())]).encode())

    # -- decided pages
    def page_key(self, manifests: list[dict], names: list[str], dps: int) -> str:
        """The key of one page decided at ``dps`` digits: its derivations' names and their modules' keys."""
        return _sha(json.dumps([[self.module_key(m) for m in manifests], list(names), dps]).encode())

    def load(self, key: str):
        """The object stored under ``key``, or None (absent, unreadable or damaged)."""
        if not self.enabled:
            return None
        try:
            with open(self.root / "pages" / f"{key}.pickle", "rb") as f:
                return pickle.load(f)
        except Exception:  # a damaged or foreign entry is a miss: the page is built again
            return None

    def store(self, key: str, value) -> None:
        """Keep ``value`` under ``key`` (and remove the oldest pages beyond :data:`KEEP`)."""
        if not self.enabled:
            return
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # something a section kept does not pickle: that page is not cached
            return
        pages = self.root / "pages"
        self._write(pages / f"{key}.pickle", data)
        with contextlib.suppress(OSError):
            entries = sorted(pages.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
            for old in entries[:-KEEP]:
                old.unlink()

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        """Write ``data`` to ``path`` whole or not at all; a folder the system refuses leaves the run uncached."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
