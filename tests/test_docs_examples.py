"""Every example in README.md and docs/*.md runs, and prints what the page shows.

A page's fenced blocks are read in order (one test per page):

- ```` ```console ```` holds commands, each on a line starting with ``$ `` (a line ending in ``\\`` continues it
  on the next, which may start with ``> ``),
  each followed by the output the page shows for it. The block runs as one bash script from the repository root,
  so ``cd``, variables and ``echo $?`` behave as in a terminal; standard error is shown with standard output, at 80
  columns. A command that exits with a status other than 0 must be followed by ``$ echo $?``, so that the page
  says so.
- ```` ```console cwd=tmp ```` runs in the page's own temporary folder instead (empty at first; ``symseq new``
  and every file a page writes go there), and ```` ```console cwd=example ```` in the same folder after the
  worked example of the README (``docs/example/``: a page and its derivation) was copied into it.
- A block of any language with ``file=PATH`` (```` ```python file=derivations/my_example.py ````) is that file's
  text: it is written into the page's temporary folder before the next command runs.
- The two ```` ```sh ```` blocks at the top of the README (install and run ``symseq verify``; install and run
  the tests) are checked against ``.ci/run``, which runs the second; no other block is left unrun.

Shown and printed outputs are compared after a minimal normalisation: trailing spaces and blank lines at the
end are dropped, the temporary folder reads ``/path/to/project`` and the repository ``/path/to/symseq``, and
pytest's timings (``in 2.24s``) are masked. Commands see a cache folder of the test session
(``SYMSEQ_CACHE_DIR``), so a first run builds and a later one reads the cache; what they print is the same.

When the command-line output changes on purpose, rewrite the shown outputs from the real ones and read the diff:

    SYMSEQ_DOCS_UPDATE=1 python -m pytest tests/test_docs_examples.py -p no:xdist -p no:cacheprovider
    git diff README.md docs/

(the update keeps a page's text wherever it already matches, so only outputs that changed are rewritten; a
command that newly exits with another status still fails the test until the page shows ``$ echo $?``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "example"
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if EXAMPLE not in p.parents)]
SEEDS = Path(os.environ.get("SYMSEQ_SEEDS") or ROOT.parent / "shared" / "seeds")
UPDATE = os.environ.get("SYMSEQ_DOCS_UPDATE") == "1"
WIDTH = 80
PROJECT, REPOSITORY = "/path/to/project", "/path/to/symseq"
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*(.*)$")


@dataclass
class Block:
    """A fenced block: its language, its ``key=value`` attributes, and its lines (``start`` is the index in the
    page's lines of its first line of text, after the opening fence)."""

    lang: str
    attrs: dict[str, str]
    start: int
    lines: list[str]


@dataclass
class Command:
    """One ``$ command`` of a console block and the output lines the page shows for it (``out_start`` and
    ``out_end`` index the page's lines)."""

    text: str
    out_start: int
    out_end: int
    shown: list[str] = field(default_factory=list)


def blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks of a page, in order. A fence closes on a line of at least as many backticks."""
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, lang, rest = m.groups()
        attrs = dict(a.split("=", 1) for a in rest.split() if "=" in a)
        j = i + 1
        while j < len(lines) and not (lines[j].startswith(ticks) and not lines[j].strip("`").strip()):
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: the block opened here is never closed")
        found.append(Block(lang, attrs, i + 1, lines[i + 1:j]))
        i = j + 1
    return found


def commands(block: Block) -> list[Command]:
    """The commands of a console block with the output lines shown after each."""
    cmds: list[Command] = []
    k = 0
    while k < len(block.lines):
        line = block.lines[k]
        if not line.startswith("$ "):
            if not cmds:
                raise ValueError(f"line {block.start + k + 1}: a console block starts with a '$ ' command")
            cmds[-1].shown.append(line)
            cmds[-1].out_end = block.start + k + 1
            k += 1
            continue
        text = line[2:]
        while text.endswith("\\") and k + 1 < len(block.lines):
            k += 1
            more = block.lines[k]
            text = text + "\n" + (more[2:] if more.startswith("> ") else more)
        cmds.append(Command(text, block.start + k + 1, block.start + k + 1))
        k += 1
    return cmds


def normalise(text: str) -> str:
    """What may vary between runs, replaced by a fixed text; used on the shown and the printed output alike."""
    text = re.sub(r" in \d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?", " in N.NNs", text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def environment(cache: str) -> dict[str, str]:
    """The environment of the commands: this Python's ``symseq`` and ``python`` first on PATH, 80 columns, no
    colour, unbuffered output (standard error and output interleave as on a terminal), and none of pytest's own
    variables (a ``pytest`` run by a page is a fresh one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""), COLUMNS=str(WIDTH),
               LINES="50", NO_COLOR="1", PYTHONUNBUFFERED="1", SYMSEQ_CACHE_DIR=cache, SYMSEQ_SEEDS=str(SEEDS),
               TERM="dumb", PYTHONDONTWRITEBYTECODE="1")
    env.pop("FORCE_COLOR", None)
    for ci in ("CI", "BUILD_NUMBER"):  # a reader's terminal, not a CI service (pytest prints its summary in full there)
        env.pop(ci, None)
    return env


MARK = "\x1e-- symseq docs command"


def run(cmds: list[Command], cwd: Path, env: dict[str, str]) -> list[tuple[str, int]]:
    """Run the commands as one bash script in ``cwd``; each one's output (standard error with it) and status."""
    script = ["set +e"]
    for i, c in enumerate(cmds):
        script += [f"{{ {c.text}\n}} 2>&1", "__rc=$?", f"printf '\\n{MARK} %s exited %s\\n' {i} $__rc", "(exit $__rc)"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert done.returncode == 0 or done.stdout, done.stderr
    results, rest = [], done.stdout
    for i in range(len(cmds)):
        m = re.search(re.escape(f"\n{MARK} {i} exited ") + r"(\d+)\n", "\n" + rest)
        assert m, f"the command {cmds[i].text!r} did not finish:\n{rest}\n{done.stderr}"
        results.append((rest[:max(m.start() - 1, 0)], int(m.group(1))))
        rest = rest[m.end() - 1:]
    return results


def with_placeholders(text: str, folder: Path) -> str:
    return text.replace(str(folder), PROJECT).replace(str(ROOT), REPOSITORY)


def check_page(page: Path, folder: Path, cache: str, update: bool = UPDATE) -> None:
    """Run the page's examples in order; compare (or, with SYMSEQ_DOCS_UPDATE=1, rewrite) the shown outputs."""
    lines = page.read_text().splitlines()
    env = environment(cache)
    problems, edits, seeded = [], [], False
    where = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
    folder.mkdir(parents=True, exist_ok=True)
    for block in blocks(lines):
        if "file" in block.attrs:
            target = folder / block.attrs["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(block.lines) + "\n")
            continue
        if block.lang == "sh" and page.name == "README.md":
            continue  # the install commands: test_the_readme_commands_are_the_ones_ci_runs
        if block.lang != "console":
            problems.append(f"{where}:{block.start}: a ```{block.lang} block that is neither a console session "
                            "nor a file (file=PATH) is never run")
            continue
        cwd = block.attrs.get("cwd", "root")
        if cwd == "example" and not seeded:
            shutil.copytree(EXAMPLE, folder, dirs_exist_ok=True)
            seeded = True
        if cwd not in ("root", "tmp", "example"):
            problems.append(f"{where}:{block.start}: cwd={cwd} is none of root, tmp, example")
            continue
        cmds = commands(block)
        results = run(cmds, ROOT if cwd == "root" else folder, env)
        for n, (cmd, (out, status)) in enumerate(zip(cmds, results)):
            printed = with_placeholders(out, folder)
            if status != 0 and (n + 1 == len(cmds) or cmds[n + 1].text != "echo $?"):
                problems.append(f"{where}:{cmd.out_start}: `{cmd.text}` exited {status}; show it with "
                                f"`$ echo $?` after it\n{printed}")
            if normalise(printed) == normalise("\n".join(cmd.shown)):
                continue
            if update:
                edits.append((cmd.out_start, cmd.out_end, normalise_ends(printed)))
            else:
                problems.append(f"{where}:{cmd.out_start}: `{cmd.text}` printed\n{printed}\n"
                                f"--- but the page shows\n" + "\n".join(cmd.shown))
    if edits:
        for start, end, text in sorted(edits, reverse=True):
            lines[start:end] = text.splitlines()
        page.write_text("\n".join(lines) + "\n")
    assert not problems, "\n\n".join(problems)


def normalise_ends(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


@pytest.fixture
def seeds():
    if not SEEDS.is_dir():
        pytest.skip(f"the seed handouts are not at {SEEDS} (set SYMSEQ_SEEDS): the bundled derivations read them")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_prints_what_the_page_shows(page, tmp_path, seeds):
    check_page(page, tmp_path, os.environ["SYMSEQ_CACHE_DIR"])


def test_the_readme_commands_are_the_ones_ci_runs():
    """The README's two commands at its top: install and run ``symseq verify``; install and run the tests, which
    ``.ci/run`` runs as written."""
    sh = [b for b in blocks((ROOT / "README.md").read_text().splitlines()) if b.lang == "sh"]
    assert len(sh) == 2, "the README has two ```sh blocks: the main job and the tests"
    main, tests = (" ".join(b.lines) for b in sh)
    assert main.endswith("pip install . && symseq verify"), main
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    for step in tests.split(" && ")[2:]:
        assert any(line.startswith(step) for line in ci), f".ci/run does not run the README's `{step}`"


def test_the_worked_example_in_the_readme_is_the_one_in_docs_example():
    """The README writes the worked example's page and derivation; the command pages use the copies in
    docs/example/, which must be the same files."""
    files = {b.attrs["file"]: "\n".join(b.lines) + "\n"
             for b in blocks((ROOT / "README.md").read_text().splitlines()) if "file" in b.attrs}
    shipped = {str(p.relative_to(EXAMPLE)): p.read_text() for p in EXAMPLE.rglob("*") if p.is_file()}
    assert shipped and {name: files.get(name) for name in shipped} == shipped


def test_the_runner_compares_outputs_and_exit_statuses(tmp_path):
    """A wrong shown output and an unshown failing status are both reported; a matching page passes."""
    page = tmp_path / "page.md"
    page.write_text("```console cwd=tmp\n$ echo one\none\n$ false\n$ echo $?\n1\n```\n")
    check_page(page, tmp_path / "work", str(tmp_path / "cache"), update=False)
    page.write_text("```console cwd=tmp\n$ echo one\ntwo\n$ false\n```\n")
    with pytest.raises(AssertionError) as failed:
        check_page(page, tmp_path / "work", str(tmp_path / "cache"), update=False)
    assert "`echo one` printed" in str(failed.value) and "--- but the page shows" in str(failed.value)
    assert "`false` exited 1" in str(failed.value)
