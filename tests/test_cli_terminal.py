"""The command line in a terminal and in a pipe: how much it prints (--quiet, --failures, --all, and the default
for each), --version, global options before or after the command, the progress display, and a reader that closes
the pipe early (the exit status is still the verdict)."""

import io
import os
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

from symseq.cli import main

ROOT = Path(__file__).resolve().parents[1]

GOOD = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation

    derivation = Derivation("tiny", title="A tiny exercise", source="exercise.txt")

    @derivation.section("1. One step")
    def step(s):
        s.claim("0.5", sp.Rational(1, 2), what="one half")
        s.claim("0.3333", sp.Rational(1, 3), what="one third")
''')
BAD = GOOD.replace('"0.3333"', '"0.3334"')
PAGE = "1. One step\n\nOne half is 0.5 and one third is 0.3333.\n"


def _folder(tmp_path, text=GOOD):
    d = tmp_path / "derivations"
    d.mkdir(exist_ok=True)
    (d / "tiny.py").write_text(text)
    (tmp_path / "exercise.txt").write_text(PAGE if text == GOOD else PAGE.replace("0.3333", "0.3334"))
    return d


def _run(args, capsys):
    code = main(["--no-color", *args])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def test_a_passing_run_piped_or_with_failures_prints_one_line(tmp_path, capsys):
    d = str(_folder(tmp_path))
    for listing in ([], ["--failures"], ["--quiet"], ["-q"]):  # not a terminal: failures and the summary
        code, lines, err = _run(["verify", "--no-bundled", "--path", d, *listing], capsys)
        assert (code, lines, err) == (0, ["2 claims in 1 derivation(s): 2 ok"], "")
    code, lines, _ = _run(["verify", "--no-bundled", "--path", d, "--all"], capsys)
    assert code == 0 and len(lines) > 5 and any("one third" in x and "0.3333" in x for x in lines)


def test_a_failing_run_lists_only_what_failed_then_the_summary(tmp_path, capsys):
    d = str(_folder(tmp_path, BAD))
    code, lines, _ = _run(["verify", "--no-bundled", "--path", d, "--failures"], capsys)
    assert code == 1 and len(lines) == 2
    assert lines[0].startswith("MISMATCH exercise.txt · 1. One step · one third: printed 0.3334, correct 0.3333")
    assert lines[1] == "2 claims in 1 derivation(s): 1 ok, 1 mismatch"
    code, lines, _ = _run(["verify", "--no-bundled", "--path", d, "--quiet"], capsys)
    assert (code, lines) == (1, ["2 claims in 1 derivation(s): 1 ok, 1 mismatch"])
    with pytest.raises(SystemExit):
        main(["verify", "--quiet", "--all"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_audit_prints_as_much_as_asked(tmp_path, capsys):
    d = str(_folder(tmp_path))
    page = str(tmp_path / "exercise.txt")
    code, lines, _ = _run(["audit", page, "--no-bundled", "--path", d], capsys)
    assert code == 0 and lines == ["exercise.txt: 2 quantity tokens — 2 covered, 0 wrong, 0 uncovered; "
                                   "1 structural, 0 reported; coverage 100.0% (against tiny)"]
    code, full, _ = _run(["audit", page, "--no-bundled", "--path", d, "--all"], capsys)
    assert code == 0 and "coverage" in full[1] and full[-1] == lines[0]
    d = str(_folder(tmp_path, BAD))
    (tmp_path / "exercise.txt").write_text(PAGE.replace("0.3333", "0.3335"))
    code, lines, _ = _run(["audit", page, "--no-bundled", "--path", d, "--failures"], capsys)
    assert code == 1 and "errata (1)" in lines[0] and "uncovered quantity tokens" not in "\n".join(lines)
    code, lines, _ = _run(["audit", page, "--no-bundled", "--path", d, "-q"], capsys)
    assert code == 1 and len(lines) == 2 and lines[0].startswith("audit failed: 1 wrong number(s)")
    assert lines[1].startswith("exercise.txt: 2 quantity tokens — 1 covered, 1 wrong")  # the summary, last


def test_audit_of_the_pages_own_arithmetic_prints_as_much_as_asked(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("# A step\n\nz = 0.8 · 0.5 + 0.1 = 0.6\n\nh = tanh(0.5) = 0.4621\n")
    code, lines, _ = _run(["audit", str(page), "--no-bundled", "--failures"], capsys)
    assert code == 1 and "errata (1)" in lines[0] and "checked and right" not in "\n".join(lines)
    code, lines, _ = _run(["audit", str(page), "--no-bundled", "--quiet"], capsys)
    assert code == 1 and len(lines) == 2
    assert lines[0].startswith("audit failed: 1 wrong number(s)")
    assert lines[1].startswith("page.md: ") and "(the page's own arithmetic: 2 statements — 1 right, 1 wrong" in lines[1]
    code, lines, _ = _run(["audit", str(page), "--no-bundled", "--all"], capsys)
    assert "checked and right (1)" in "\n".join(lines)


def test_version_comes_from_the_package_metadata(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"symseq {version('symseq')}\n"


def test_global_options_are_accepted_before_or_after_the_command(tmp_path, capsys):
    from symseq.cli import _parse

    d = str(_folder(tmp_path))
    for argv in (["--no-color", "--traceback", "--no-bundled", "--path", d, "verify"],
                 ["verify", "--no-color", "--traceback", "--no-bundled", "--path", d],
                 ["--no-color", "--path", d, "verify", "--traceback", "--no-bundled"]):
        args = _parse(argv)
        assert (args.no_color, args.traceback, args.no_bundled, args.path) == (True, True, True, [d]), argv
        assert main(argv) == 0
        assert capsys.readouterr().out == "2 claims in 1 derivation(s): 2 ok\n"
    assert _parse(["--path", "a", "list", "--path", "b"]).path == ["a", "b"]  # both kept, in order
    for command in (["list"], ["show", "tiny"], ["latex", "tiny"], ["audit", "x.txt"], ["new", "x"]):
        assert _parse(["--no-color", *command]).no_color and _parse([*command, "--no-color"]).no_color


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_goes_to_a_terminal_on_standard_error_at_once_and_never_to_a_pipe(tmp_path, capsys, monkeypatch):
    d = str(_folder(tmp_path))
    monkeypatch.setenv("TERM", "xterm")
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["verify", "--no-bundled", "--path", d]) == 0
    assert "building tiny" in err.getvalue()  # named while it is built (stdout, a pipe, is left clean)
    assert capsys.readouterr().out == "2 claims in 1 derivation(s): 2 ok\n"
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert main(["verify", "--no-bundled", "--path", d]) == 0
    assert sys.stderr.getvalue() == ""


@pytest.mark.parametrize("command", [["verify", "--all"], ["show", "tiny"], ["audit", "exercise.txt", "--all"]])
def test_a_real_pipe_closed_early_keeps_the_exit_status_and_says_nothing(tmp_path, command):
    _folder(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    cli = " ".join([sys.executable, "-m", "symseq.cli", "--no-bundled", *command])
    for reader in ("head -1", "true"):  # reads one line; reads nothing and is gone at once
        p = subprocess.run(["bash", "-c", f"set -o pipefail; {cli} | {reader}"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
        assert (p.returncode, p.stderr) == (0, ""), (command, reader)
    if command[0] != "verify":
        return
    bad = subprocess.run(["bash", "-c", f"set -o pipefail; {cli} | true"], cwd=_folder(tmp_path, BAD).parent,
                         env=env, capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (1, "")  # the verdict, not the pipe
