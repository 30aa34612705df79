"""The rich console every command prints on: its own module, so that a command that prints no mathematics
(``symseq list``, an audit with no derivation) does not load SymPy with the terminal renderer."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.table import Table


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


def report_table(title, columns) -> "Table":
    """The one table style of the reports (``symseq verify``, ``symseq audit``, ``symseq list``): a bold title on
    the left, a heavy rule under the header, no frame, as wide as its content needs (never stretched to the
    terminal's width; narrowed when the terminal is narrower, each column wrapping as its cells allow).

    Args:
        title: the title, plain text (never read as markup), or a :class:`rich.text.Text`.
        columns: the column headings, plain text.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    title = title if isinstance(title, Text) else Text(str(title))
    t = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAVY, expand=False,
              pad_edge=False, show_edge=False, collapse_padding=True,
              min_width=title.cell_len)  # the title on one line where it fits
    for c in columns:
        t.add_column(Text(str(c)))
    return t
