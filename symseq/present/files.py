"""Writing output files: the one place symseq writes a file (JSON reports, LaTeX, figures).

Every command that writes goes through :func:`write_atomic`, which writes

* only regular files: a symbolic link, a named pipe (FIFO), a device node, a socket or a folder at the path
  is refused, with or without ``force``, rather than replaced by a regular file;
* never over one of the command's inputs (the handout being audited, a derivation module), compared by
  resolved path and by :func:`os.path.samefile` (a hard link is the same file);
* never over an existing file unless ``force`` (``--force``);
* into an existing folder, or into folders it creates when asked (``mkdir``, ``--mkdir``), never at the root of
  the file system (``/new-folder/out.json`` is refused even then);
* never along a path that runs through a file (``notes.txt/out.tex``);
* through a temporary file in the same folder, moved into place by :func:`os.replace` (or a hard link
  without ``force``), so an interrupted run leaves the old file intact.

A folder that cannot be created or written, a full disk, or any other refusal of the operating system is a
:class:`~symseq.errors.FileSystemError` that names the path and the system's reason (the CLI exits 3); a
target refused by the rules above is a :class:`~symseq.errors.SymseqError` (the CLI exits 2).

:func:`check_target` is the one place these rules are decided; every command that writes (``latex -o``,
``figure -o``, ``verify --json``, ``audit --json``, ``new``) calls it before its work and again, through
:func:`write_atomic`, when it writes.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..errors import FileSystemError, SymseqError

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def check_target(path, *, force: bool = False, mkdir: bool = False, inputs=()) -> Path:
    """Refuse an output path symseq must not write (see the module docstring); return it as a :class:`Path`.

    ``inputs`` are the paths the command reads (files that need not exist). ``mkdir`` allows the missing folders
    of the path to be created (by :func:`write_atomic`), except at the root of the file system. Call it before
    long work, so a refused path is reported at once; :func:`write_atomic` calls it again before writing.

    Raises:
        SymseqError: the path is a symbolic link, a FIFO, a device node, a socket or a folder; it runs through a
            file; its folder is missing and ``mkdir`` is false, or the first missing folder would be made at the
            root of the file system; it is one of ``inputs``; or it exists and ``force`` is false.
        FileSystemError: the path cannot be examined (a folder on the way cannot be read).
    """
    path = Path(path)
    if not str(path) or path.name in ("", ".", ".."):
        raise SymseqError(f"{str(path)!r} is not a file name; give the path of the file to write")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
        _check_folder(path, mkdir)
    except NotADirectoryError:
        raise SymseqError(f"cannot write {path}: {_parent_text(path)} is not a folder but a file; choose a path "
                          f"whose folders are folders") from None
    except OSError as exc:
        raise FileSystemError(f"cannot write {path}: {exc.strerror or exc}") from None
    for p in inputs:
        if _same_file(path, p):
            raise SymseqError(f"{path} is an input of this command ({p}); writing there would overwrite it: "
                              f"choose another file for the output")
    if st is None:
        return path
    if stat.S_ISLNK(st.st_mode):
        raise SymseqError(f"{path} is a symbolic link (to {os.readlink(path)}); symseq writes only regular files and "
                          f"does not replace a link by one: give the file itself, or another path")
    for test, kind in _KINDS:
        if test(st.st_mode):
            hint = "give a file name inside it" if kind == "a folder" else \
                "symseq writes only regular files (for standard output, use '-' or leave out the file)"
            raise SymseqError(f"{path} is {kind}; {hint}")
    if not force:
        raise SymseqError(_EXISTS.format(path=path))
    return path


_EXISTS = "{path} exists; pass --force to overwrite it, or choose another file"


def _check_folder(path: Path, mkdir: bool) -> None:
    """Refuse a missing folder of ``path`` unless ``mkdir``, and with it a first missing folder at the root."""
    folder = path.parent
    if folder.is_dir():
        return
    missing = folder
    while not missing.parent.is_dir() and missing.parent != missing:
        missing = missing.parent
    if not mkdir:
        more = "" if missing == folder else f" (nor does {missing})"
        raise SymseqError(f"cannot write {path}: the folder {folder} does not exist{more}; pass --mkdir to "
                          f"create it, or choose an existing folder")
    top = Path(os.path.abspath(missing))
    if top.parent.resolve() == Path(top.anchor).resolve():
        raise SymseqError(f"cannot write {path}: symseq does not create folders at the root of the file system "
                          f"({top}); create it yourself, or choose another folder")


def write_atomic(path, write, *, force: bool = False, mkdir: bool = False, binary: bool = False,
                 inputs=()) -> Path:
    """Write a regular file through a temporary file in its folder (see the module docstring).

    ``write`` receives the open temporary file (text, UTF-8 with ``\\n`` line ends, or ``binary``). A missing
    folder is created only with ``mkdir`` (:func:`check_target`). A new file gets the mode 0o666 less the umask;
    a replaced one keeps its mode. Without ``force`` the final step is a hard link, which fails if the file
    appeared meanwhile.

    Returns:
        The path written.

    Raises:
        SymseqError: a target :func:`check_target` refuses.
        FileSystemError: the folder cannot be created or written, or writing fails (a full disk).
    """
    path = check_target(path, force=force, mkdir=mkdir, inputs=inputs)
    folder = path.parent
    try:
        if mkdir:
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileSystemError(f"cannot create the folder {folder} for {path}: {exc.strerror or exc}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise FileSystemError(f"cannot write {path}: the folder {folder} is not writable "
                              f"({exc.strerror or exc}); choose another folder") from None
    try:
        try:
            old = os.stat(path).st_mode & 0o7777 if path.exists() else None
            os.chmod(tmp, old if old is not None else 0o666 & ~_umask())
            with os.fdopen(fd, "wb" if binary else "w",
                           **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as f:
                write(f)
            check_target(path, force=force, mkdir=mkdir, inputs=inputs)  # it may have changed while we wrote
            if force:
                os.replace(tmp, path)
            else:
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    raise SymseqError(_EXISTS.format(path=path))
                except OSError:  # no hard links on this file system: the existence check above must do
                    os.replace(tmp, path)
        except FileSystemError:
            raise
        except OSError as exc:
            raise FileSystemError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return path


def _same_file(path: Path, other) -> bool:
    """Whether ``path`` and ``other`` name one file: the same resolved path, or the same inode (a hard link)."""
    other = Path(other)
    try:
        if path.resolve() == other.resolve():
            return True
        return path.exists() and other.exists() and os.path.samefile(path, other)
    except OSError:
        return False


def _parent_text(path: Path) -> str:
    """The first ancestor of ``path`` that exists and is not a folder (what makes the path impossible)."""
    for p in reversed(path.parents):
        if p.exists() and not p.is_dir():
            return str(p)
    return str(path.parent)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
