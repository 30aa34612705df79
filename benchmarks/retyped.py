"""How much of its page a derivation retypes: the decimals typed in each derivation module that stand verbatim on
the page it derives, and the module's length.

A derivation should name the page's quantities and say where the page prints them (``s.given("W_z")``,
``s.claim(node, at="Table 16")``), not copy their digits: a copied decimal is one more place where page and code
can drift apart. A decimal here is a number written with a decimal point, found by the reader's own scanner
(:func:`symseq.read.scan`) in the module's string literals and as a float literal of its code; it is retyped when
the page prints a number of the same text.

    SYMSEQ_SEEDS=../shared/seeds python benchmarks/retyped.py

prints one line per module (decimals typed, of them on its page, lines) and the totals for the bundled
derivations and the worked examples.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from symseq.read import scan
from symseq.read.document import read

ROOT = Path(__file__).resolve().parents[1]
SEEDS = Path(os.environ.get("SYMSEQ_SEEDS", ROOT.parent / "shared" / "seeds"))
GROUPS = {"bundled": (ROOT / "derivations", SEEDS), "worked examples": (ROOT / "tests" / "data" / "examples" /
                                                                         "derivations", ROOT / "tests" / "data" /
                                                                         "examples")}


def decimals(text: str) -> list[str]:
    """The printed decimals of a text: every entry of its numeric tokens that has a decimal point."""
    out = []
    for line in text.splitlines():
        for t in scan(line):
            if t.kind == "number" and "." in t.text:
                out.append(t.text.strip())
            if t.kind in ("vector", "matrix"):
                out.extend(e for e in _entries(t.text) if "." in e)
    return out


def _entries(text: str) -> list[str]:
    """The printed entries of a vector or matrix token, as printed (not canonical)."""
    for ch in "[](){}&;\\":
        text = text.replace(ch, " ")
    return [w for w in text.replace(",", " ").split() if any(c.isdigit() for c in w)]


def _docstrings(tree: ast.AST) -> set:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def measure(module: Path, pages: Path) -> tuple[int, int, int]:
    """(decimals typed, of them printed on the page, lines) of one derivation module."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found, source = [], ""
    text = module.read_text(encoding="utf-8")
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "source" and isinstance(node.value, ast.Constant):
            source = node.value.value
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found.extend(decimals(node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, float):
            found.append(ast.get_source_segment(text, node) or repr(node.value))
    page = pages / source
    if not page.is_file():
        sys.exit(f"{module.name}: its page {page} is not there (set SYMSEQ_SEEDS to the seed handouts' folder)")
    on_page = set(decimals("\n".join(read(page).lines)))
    return len(found), sum(d in on_page for d in found), len(text.splitlines())


def main() -> int:
    for group, (folder, pages) in GROUPS.items():
        total = [0, 0, 0]
        print(f"{group}: decimals typed, of them on the page, lines")
        for module in sorted(folder.glob("*.py")):
            if module.name == "__init__.py":
                continue
            row = measure(module, pages)
            total = [a + b for a, b in zip(total, row)]
            print(f"  {module.name:44} {row[0]:5} {row[1]:5} {row[2]:5}")
        print(f"  {'total':44} {total[0]:5} {total[1]:5} {total[2]:5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
