"""The reader of printed mathematics has one home (DESIGN.md, "Layout": ``read/``): what a printed number looks
like is written once, as the grammar's NUMBER terminal (``symseq/read/printed.lark``), and every module that reads
a page or a claim matches numbers with it (:data:`symseq.read.number.NUMBER`, ``SIGNED_NUMBER``) or reads them with
:func:`symseq.read.read_number`. As the rounding test does for ``numbers.py``, this test fails on a pattern of a
decimal number written anywhere else in the package."""

import ast
from pathlib import Path

import symseq

ROOT = Path(symseq.__file__).parent

# fragments of a regular expression that define a decimal number (digits with a decimal part, an exponent, thousands)
NUMBER_FRAGMENTS = (r"\d+(?:\.\d+)?", r"\d+(\.\d+)?", r"\d*\.\d", r"\d+\.\d", r"|\.\d+", r"[-\d.", r"[\d.]+",
                    r"[eE][-+", r"\d{1,3}(?:,\d{3})")

# patterns that hold those fragments but are no number: a Python format specifier (:.4f, %.3e) in quoted code
NOT_NUMBERS = {("audit/structure.py", "_FORMAT_SPEC")}

# below the reader in the layout: numbers.py reads the decimal strings an author types in code (value="0.2") and
# the project's own renderings, which it rounds (DESIGN.md: a number is rounded in one place)
BELOW_THE_READER = {"numbers.py"}


def _fragments(path: Path):
    """(line, name the string is assigned to or "", fragment) of each number fragment in a string of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {id(c): t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) for c in ast.walk(node.value)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for frag in NUMBER_FRAGMENTS:
                if frag in node.value:
                    yield node.lineno, names.get(id(node), ""), frag


def test_a_printed_number_is_defined_only_by_the_reader():
    found = []
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT)
        if rel.parts[0] == "read" or str(rel) in BELOW_THE_READER:
            continue
        found += [f"{rel}:{line}: {frag}" for line, name, frag in _fragments(f) if (str(rel), name) not in NOT_NUMBERS]
    assert not found, "a number pattern outside symseq/read/ (use read.number.NUMBER or read_number):\n" + \
        "\n".join(found)


def test_the_guard_sees_a_number_pattern():
    """The fragments catch the patterns the reader replaced (so the test above can fail)."""
    old = r"(?P<num>(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+(?![\d.]))?)"
    assert sum(frag in old for frag in NUMBER_FRAGMENTS) >= 3
