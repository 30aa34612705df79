"""The rich console every command prints on: its own module, so that a command that prints no mathematics
(``symseq list``, an audit with no derivation) does not load SymPy with the terminal renderer."""

from __future__ import annotations

import os

from rich.console import Console


def console(no_color: bool = False, file=None) -> Console:
    """A rich console; when output is not a terminal the width is $COLUMNS or 140 (tables stay readable in logs)."""
    c = Console(no_color=no_color, file=file, highlight=False, soft_wrap=False)
    if not c.is_terminal:
        try:
            width = int(os.environ.get("COLUMNS", "140"))
        except ValueError:
            width = 140
        c = Console(no_color=no_color, file=file, highlight=False, soft_wrap=False, width=width)
    return c
