"""Row names for blocks: a base symbol plus an optional tag as superscript (Q^{(1)}, LN_1^{(0)})."""

from __future__ import annotations


def tagged(base: str, tag: str | None) -> str:
    """``tagged("Q", "(1)")`` → ``"Q^{(1)}"``; no tag leaves the name as it is."""
    if not tag:
        return base
    return f"{base}^{{{tag}}}"
