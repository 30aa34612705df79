"""Writing output files: atomically, and never over an existing file unless asked."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import SymseqError


def write_atomic(path, write, *, force: bool = False, binary: bool = False) -> Path:
    """Write a file through a temporary file in its folder, never replacing an existing file unless ``force``.

    ``write`` receives the open temporary file. Without ``force`` the final
    step is a hard link, which fails if the file appeared meanwhile.

    Raises:
        SymseqError: when ``path`` exists and ``force`` is false.
    """
    path = Path(path)
    if path.exists() and not force:
        raise SymseqError(f"{path} exists; pass --force to overwrite it (or choose another file with -o)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as f:
            write(f)
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise SymseqError(f"{path} exists; pass --force to overwrite it (or choose another file with -o)")
            except OSError:  # no hard links on this file system: the existence check above must do
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
