"""The README's "Check your own worked example", followed as written: its page, ``symseq new``, the three lines
it changes in the starter, then ``verify`` and ``audit`` as it says they come out, and the erratum it shows."""

import re
from pathlib import Path

from symseq.cli import main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    """The README's section ``title``: up to the next heading outside a code fence."""
    out, fenced = [], False
    for line in README.split(f"## {title}\n", 1)[1].splitlines(keepends=True):
        fenced ^= line.startswith("```")
        if line.startswith("## ") and not fenced:
            break
        out.append(line)
    return "".join(out)


SECTION = _section("Check your own worked example")
PAGE, LINES, ERRATUM = re.findall(r"```(?:text|python)\n(.*?)```", SECTION, re.S)


def _starter_with_the_readmes_lines(path: Path):
    text = path.read_text(encoding="utf-8")
    head, sep, _ = text.partition('    s.claim("0.5", z')
    assert sep, "the starter no longer ends with the claims the README replaces"
    path.write_text(head + LINES, encoding="utf-8")


def test_the_walkthrough_gives_what_the_readme_says(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "my-worked-example.md"
    page.write_text(PAGE, encoding="utf-8")
    assert main(["new", "my-example"]) == 0
    _starter_with_the_readmes_lines(tmp_path / "derivations" / "my_example.py")
    capsys.readouterr()
    assert main(["verify", "my-example"]) == 0
    assert "3 claims in 1 derivation(s): 3 ok" in capsys.readouterr().out
    assert main(["audit", page.name]) == 0
    assert "9 quantity tokens — 9 covered, 0 wrong" in capsys.readouterr().out
    # the erratum the README shows: the same page with tanh(0.5) printed 0.4631
    page.write_text(PAGE.replace("= 0.4621", "= 0.4631"), encoding="utf-8")
    assert main(["audit", page.name]) == 1
    out = " ".join(re.sub("[│┃]", " ", capsys.readouterr().out).split())  # the table's cells as words
    for row in ERRATUM.strip().splitlines()[1:]:
        if not row.startswith(("errata", " line")):
            words = row.split()
            assert " ".join(words[:3]) in out, (row, out)
    assert "root wrong even from the page's own printed operands: tanh(0.5) gives 0.4621" in out
