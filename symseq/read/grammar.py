"""The grammar file of printed mathematics (``printed.lark``) and its terminals.

The grammar's terminals are the project's one definition of a printed number, a name and an operator. The
page scanner and :func:`symseq.read.number.read_number` match text with the grammar's own terminal patterns,
read here from the grammar file, so that what the parser calls a number and what the scanner finds on a page
cannot disagree.
"""

from __future__ import annotations

import functools
import re
from importlib import resources


@functools.cache
def text() -> str:
    """The grammar file, as lark reads it."""
    return resources.files(__package__).joinpath("printed.lark").read_text(encoding="utf-8")


_TABLES: list = [None]  # the folder the parser's tables are kept in between runs, when the cache is on


def keep_tables(folder) -> None:
    """Keep the parser's LALR tables in ``folder`` (the cache of :mod:`symseq.cache`, when it is on), so that a
    later process loads them instead of building them (about 0.05 s of CPU); None keeps nothing."""
    _TABLES[0] = folder


def tables_file() -> str | None:
    """Where the parser's tables are kept (a file named by the grammar's SHA-256), or None."""
    if _TABLES[0] is None:
        return None
    import hashlib
    from pathlib import Path

    folder = Path(_TABLES[0])
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(folder / f"grammar-{hashlib.sha256(text().encode()).hexdigest()[:16]}.lark-tables")


@functools.cache
def terminal(name: str) -> str:
    """The regular expression of the grammar's terminal ``name`` (``NUMBER``, ``NAME``, …), as written in the
    grammar file (``NAME.priority: /pattern/``).

    Raises:
        KeyError: when the grammar defines no such regular-expression terminal.
    """
    m = re.search(rf"^{re.escape(name)}(?:\.\d+)?:\s*/(.*)/[a-z]*\s*$", text(), re.M)
    if m is None:
        raise KeyError(f"the grammar defines no terminal {name}")
    return m.group(1).replace("\\/", "/")


@functools.cache
def compiled(name: str) -> re.Pattern:
    """:func:`terminal` ``name``, compiled."""
    return re.compile(terminal(name))
