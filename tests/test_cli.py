"""The command line: verify exit status, the JSON records, clear errors."""

import json
import textwrap

import pytest

from symseq.cli import main

BAD = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation, Ledger, blocks

    derivation = Derivation("bad-week8", title="A copy of Week 8 with one wrong digit", source="000_copy.txt")

    @derivation.section("§4 The forward pass by hand")
    def forward(s):
        L = s.ledger("two tokens")
        H = L.input("H", sp.eye(2))
        eye = sp.eye(2)
        head = blocks.attention_head(L, H, L.parameter("W_Q", eye), L.parameter("W_K", eye),
                                     L.parameter("W_V", eye), orientation="in_out", mask="causal")
        Hp = blocks.residual(L, "H'", H, head.O)
        Z = blocks.linear(L, "Z", Hp, L.parameter("W_out", eye), orientation="in_out")
        P = blocks.probabilities(L, Z)
        s.claim("0.330238", head.A[1, 0], what="w")
        s.claim("0.792413", P[1, 1], what="p(B|AB)")
''')


def test_verify_bundled_passes_and_writes_json(tmp_path, capsys):
    out = tmp_path / "claims.json"
    assert main(["--no-color", "verify", "week08-decoder", "--all", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1/(1 + e^{1/√2})" in text
    assert "claims in 1 derivation(s)" in text
    doc = json.loads(out.read_text())
    assert doc["schema"] == "symseq-verify/2" and doc["ok"] and doc["complete"] and doc["counts"]["mismatch"] == 0
    records = doc["claims"]
    assert len([r for r in records if r["kind"] == "value"]) >= 30
    assert all(r["status"] == "ok" for r in records)
    p = [r for r in records if r["what"] == "p(B|AB)" and r["printed"] == "0.792412"][0]
    assert p["shape"] == [] and p["value"][0].startswith("0.792411504248746443540635504")
    assert p["source"] == "000_30e9e4099f2cd2dc.txt" and p["location"].startswith("§4")


def test_many_digits_are_the_true_digits(capsys, monkeypatch):
    # p(B|AB) = 0.79241150424874644354063550408792…; float64 would go wrong after about 16 digits
    monkeypatch.setenv("COLUMNS", "250")  # the value on one line
    assert main(["--no-color", "verify", "week08-decoder", "--all", "--digits", "30"]) == 0
    assert " 0.792411504248746443540635504088 " in capsys.readouterr().out
    assert main(["verify", "week08-decoder", "--digits", "41"]) == 2
    assert "--digits must be between 1 and 40" in capsys.readouterr().err


def test_the_json_report_is_written_like_any_output_file(tmp_path, capsys):
    import os

    old = os.umask(0o022)
    try:
        out = tmp_path / "reports" / "claims.json"  # the folder is made when asked, as for LaTeX and figures
        assert main(["--no-color", "verify", "week08-decoder", "--json", str(out), "--mkdir"]) == 0
        out.write_text("kept")
        assert main(["--no-color", "verify", "week08-decoder", "--json", str(out)]) == 2  # not over a file
        assert "claims.json exists; pass --force to overwrite it" in capsys.readouterr().err
        assert out.read_text() == "kept"
        assert main(["--no-color", "verify", "week08-decoder", "--json", str(out), "--force"]) == 0  # rewritten
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644
    assert len(json.loads(out.read_text())["claims"]) >= 90


def test_one_wrong_digit_fails_with_location_and_correct_rounding(tmp_path, capsys):
    d = tmp_path / "derivations"
    d.mkdir()
    (d / "bad.py").write_text(BAD)
    code = main(["--no-color", "verify", "--no-bundled", "--path", str(d)])
    text = capsys.readouterr().out
    assert code == 1
    assert "MISMATCH 000_copy.txt · §4 The forward pass by hand · p(B|AB)" in text
    assert "correct 0.792412" in text
    assert "1 mismatch" in text


def test_unknown_name_lists_valid_derivations(capsys):
    assert main(["verify", "no-such-handout"]) == 2
    err = capsys.readouterr().err
    assert "valid names" in err and "week08-decoder" in err and "Traceback" not in err


def test_list(capsys):
    assert main(["--no-color", "list"]) == 0
    assert "week08-decoder" in capsys.readouterr().out


def test_author_folder_errors_are_clear(tmp_path, capsys):
    d = tmp_path / "proj" / "derivations"
    d.mkdir(parents=True)
    (d / "broken.py").write_text("from symseq import Derivation\nx = (\n")
    assert main(["verify", "--no-bundled", "--path", str(d)]) == 2
    err = capsys.readouterr().err
    assert "cannot load" in err and "broken.py" in err and "SyntaxError" in err and "Traceback" not in err
    (d / "broken.py").write_text("X = 1\n")
    assert main(["verify", "--no-bundled", "--path", str(d)]) == 2
    assert "defines no Derivation" in capsys.readouterr().err


def test_path_may_name_the_project_folder_and_json_to_stdout_is_pure(tmp_path, capsys):
    d = tmp_path / "proj" / "derivations"
    d.mkdir(parents=True)
    (d / "ok.py").write_text(BAD.replace('"0.792413"', '"0.792412"'))
    assert main(["--no-color", "verify", "--no-bundled", "--path", str(tmp_path / "proj"), "--json", "-"]) == 0
    records = json.loads(capsys.readouterr().out)["claims"]
    assert [r["status"] for r in records] == ["ok", "ok"]


def test_printed_must_be_a_string():
    from symseq import Derivation

    d = Derivation("t", title="t", source="t.txt")

    @d.section("s")
    def s(sec):
        sec.claim(0.330238, 1)

    line = s.__code__.co_firstlineno + 2  # its decorator, then its def: the line of the claim heads the error
    assert f"test_cli.py:{line}: ClaimError: " in d.sections[0].error and "must be the string" in d.sections[0].error


def test_the_source_tree_derivations_are_not_loaded_twice(monkeypatch):
    from pathlib import Path

    from symseq.authoring import default_paths

    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # the repository root: ./derivations is the bundled set
    assert default_paths() == []


def test_show_finds_a_section_by_the_table_it_shows(capsys):
    assert main(["--no-color", "show", "week06-encoder", "Table 13"]) == 0
    assert "begins" in capsys.readouterr().out


HALF = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation

    derivation = Derivation("left-to-reader", title="an exercise", source="exercise.txt")

    @derivation.section("An exercise")
    def exercise(s):
        s.claim("0.5", sp.Rational(1, 2), what="the answer", in_text=False)  # checked, not looked for in the text
''')


def _folder(tmp_path, text=HALF):
    d = tmp_path / "derivations"
    d.mkdir(exist_ok=True)
    (d / "mine.py").write_text(text)
    return d


def test_exit_status_says_what_went_wrong(tmp_path, capsys, monkeypatch):
    """0 all hold, 1 a claim is wrong, 2 bad usage or input, 3 the environment (file system, missing package)."""
    d = _folder(tmp_path, BAD)
    assert main(["verify", "--no-bundled", "--path", str(d)]) == 1
    assert main(["verify", "week08-decoder", "--digits", "0"]) == 2
    assert main(["audit", str(tmp_path / "no-such.txt"), "-d", "week08-decoder"]) == 2
    monkeypatch.setattr("tempfile.mkstemp", lambda *a, **k: (_ for _ in ()).throw(OSError(30, "Read-only file system")))
    assert main(["verify", "week08-decoder", "--json", str(tmp_path / "claims.json")]) == 3
    assert "Read-only file system" in capsys.readouterr().err
    monkeypatch.setattr("symseq.cli.cmd_list", lambda args, out: 1 / 0)  # a bug is not a wrong claim
    assert main(["list"]) == 4
    assert "internal error: ZeroDivisionError: division by zero (a bug in symseq" in capsys.readouterr().err
    from symseq.cli import EXIT_CODES  # documented in --help

    assert sorted(EXIT_CODES) == [0, 1, 2, 3, 4]


class _ClosedPipe:
    """Standard output whose reader has gone (``symseq verify | head``)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")

    def isatty(self):
        return False


def test_a_closed_pipe_ends_the_output_quietly_and_keeps_the_verdict(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    assert main(["verify", "week08-decoder"]) == 0
    assert main(["show", "week08-decoder", "§4"]) == 0
    assert main(["verify", "--no-bundled", "--path", str(_folder(tmp_path, BAD))]) == 1  # the verdict, not the pipe
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stderr", _ClosedPipe())  # the report of --json - goes to standard error
    assert main(["verify", "week08-decoder", "--json", "-"]) == 0


def test_a_closed_pipe_in_a_real_process_prints_nothing(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.Popen([sys.executable, "-m", "symseq.cli", "--no-color", "verify", "week08-decoder"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env)
    p.stdout.close()  # the reader goes before the first line is written
    err = p.stderr.read().decode()
    assert p.wait() == 0 and err == ""


def test_help_says_that_derivations_are_imported_and_no_local_skips_them(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "which runs their code" in " ".join(capsys.readouterr().out.split())
    d = _folder(tmp_path, "open('imported', 'w').close()\n" + HALF)
    monkeypatch.chdir(tmp_path)
    assert main(["--no-color", "list", "--no-local"]) == 0
    assert not (tmp_path / "imported").exists() and "left-to-reader" not in capsys.readouterr().out
    assert main(["--no-color", "list"]) == 0
    assert (tmp_path / "imported").exists() and "left-to-reader" in capsys.readouterr().out
    assert main(["--no-color", "list", "--no-local", "--path", str(d)]) == 0  # --path still loads what it names


def test_markup_in_the_handout_is_printed_as_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the context on one line
    d = _folder(tmp_path, HALF.replace(", in_text=False", ""))
    handout = tmp_path / "exercise.txt"
    handout.write_text("An exercise\n\nThe answer is 0.5, not [/x] 0.4444 or [bold]0.25[/bold].\n")
    assert main(["--no-color", "audit", str(handout), "--all", "--no-bundled", "--path", str(d)]) == 0  # MarkupError
    out = capsys.readouterr().out
    assert "not [/x] ⟨0.4444⟩ or [bold]0.25[/bold]." in out and "[bold]⟨0.25⟩[/bold]." in out


def test_an_empty_handout_or_another_one_fails_saying_why(tmp_path, capsys):
    d = _folder(tmp_path)
    for text in ("", "A shopping list: 3 apples, 2 pears.\n"):
        handout = tmp_path / "exercise.txt"
        handout.write_text(text)
        assert main(["--no-color", "audit", str(handout), "--no-bundled", "--path", str(d)]) == 1
        out = capsys.readouterr().out
        assert "no section of left-to-reader found in the text" in out
    handout.write_text("An exercise\n\nWork out the answer.\n")  # its section is there: nothing to cover
    assert main(["--no-color", "audit", str(handout), "--no-bundled", "--path", str(d)]) == 0
    assert "coverage — (no quantity tokens)" in capsys.readouterr().out
    assert main(["--no-color", "audit", str(handout), "--no-bundled", "--path", str(d), "--fail-under", "100"]) == 1
    assert "the text has no quantity tokens" in capsys.readouterr().out


def test_a_handout_over_the_size_limit_is_refused_at_once(tmp_path, capsys):
    big = tmp_path / "000_30e9e4099f2cd2dc.txt"
    for size in (2 * 1024 * 1024, 50 * 1024 * 1024):  # (a sparse file: nothing is written)
        with open(big, "wb") as f:
            f.truncate(size)
        assert main(["audit", str(big)]) == 2
        err = capsys.readouterr().err
        assert f"has {size:,} bytes; the audit reads handouts of at most 500,000 bytes" in err
    from symseq.audit import parse
    from symseq.read.document import SIZE_LIMIT, AuditError

    with pytest.raises(AuditError, match="characters; the audit reads handouts of at most"):
        parse("0.5 " * (SIZE_LIMIT // 4 + 1))


EXITS = textwrap.dedent('''
    import sys

    import sympy as sp

    from symseq import Derivation

    derivation = Derivation("exits", title="Exits", source="ex.md")


    @derivation.section("One")
    def one(s):
        s.claim("0.6", sp.Rational(1, 2), what="a half, printed wrong")


    @derivation.section("Two")
    def two(s):
        sys.exit(0)
''')


def _line(text: str, code: str) -> int:
    """The 1-based line of ``text`` that holds ``code``."""
    return next(i for i, ln in enumerate(text.splitlines(), start=1) if code in ln)


def test_a_derivation_that_calls_sys_exit_never_passes(tmp_path, capsys):
    """sys.exit(0) in a section ended the run with status 0, nothing printed and the wrong claim undecided (a false
    pass); it is the section's error now, and the other sections are still decided. A section that does not build
    leaves claims undecided: status 2 (it was 1, which says a claim is wrong), whatever else fails. At import it is
    a module that does not load (status 2)."""
    d = _folder(tmp_path, EXITS)
    assert main(["verify", "--no-bundled", "--no-cache", "--path", str(d)]) == 2
    out = capsys.readouterr().out
    assert (f"ERROR ex.md · Two: the section did not build: {d / 'mine.py'}:{_line(EXITS, 'sys.exit(0)')}: "
            f"SystemExit: the section called sys.exit(0)") in out
    assert "MISMATCH ex.md · One · a half, printed wrong: printed 0.6, correct 0.5" in out
    exits = tmp_path / "exits_at_import.py"
    exits.write_text("import sys\nsys.exit(0)\n")
    assert main(["verify", "--no-bundled", "--no-cache", "--path", str(exits)]) == 2
    assert "exits_at_import.py (line 2): SystemExit: the module called sys.exit(0)" in capsys.readouterr().err


STOPS = textwrap.dedent('''
    import sympy as sp

    from symseq import Derivation

    derivation = Derivation("stops", title="Stops", source="stops.md")


    @derivation.section("One")
    def one(s):
        s.claim("0.5", sp.Rational(1, 2), what="a half")


    @derivation.section("Two")
    def two(s):
        raise SystemExit("x")


    @derivation.section("Three")
    def three(s):
        raise KeyboardInterrupt


    @derivation.section("Four")
    def four(s):
        s.claim("0.5", undefined_name, what="a typo")
''')


def test_a_section_that_exits_or_interrupts_is_its_error_and_status_2(tmp_path, capsys):
    """raise SystemExit("x") in a section exited 1 (which says a claim is wrong) and a KeyboardInterrupt raised by a
    section ended the run with 130 and nothing printed. Each is its section's error, with the file and line of the
    author's code, as a NameError is without --traceback; the run prints and writes its report and exits 2."""
    d = _folder(tmp_path, STOPS)
    out_json = tmp_path / "out.json"
    assert main(["verify", "--no-bundled", "--no-cache", "--path", str(d), "--json", str(out_json)]) == 2
    out, err = capsys.readouterr()
    file = d / "mine.py"
    assert (f"ERROR stops.md · Two: the section did not build: {file}:{_line(STOPS, 'SystemExit')}: SystemExit: "
            f"the section called sys.exit('x')") in out
    assert (f"ERROR stops.md · Three: the section did not build: {file}:{_line(STOPS, 'KeyboardInterrupt')}: "
            f"KeyboardInterrupt: the section raised KeyboardInterrupt, and no Ctrl-C was pressed") in out
    assert (f"ERROR stops.md · Four: the section did not build: {file}:{_line(STOPS, 'undefined_name')}: NameError: "
            f"name 'undefined_name' is not defined") in out
    assert "Traceback" not in out + err and "1 claims in 1 derivation(s): 1 ok, 3 section(s) failed to build" in out
    doc = json.loads(out_json.read_text())
    assert [b["section"] for b in doc["broken_sections"]] == ["Two", "Three", "Four"] and not doc["ok"]
    page = tmp_path / "stops.md"
    page.write_text("# One\n\nA half is 0.5.\n")
    assert main(["--no-color", "audit", str(page), "--no-bundled", "--no-cache", "--path", str(d)]) == 2
    assert "3 section(s) of the derivation did not build" in capsys.readouterr().out


@pytest.mark.parametrize("raised, said", [("raise KeyboardInterrupt", "KeyboardInterrupt: the module raised "
                                           "KeyboardInterrupt (no Ctrl-C was pressed)"),
                                          ("raise SystemExit('x')", "SystemExit: the module called sys.exit('x')")])
def test_a_module_that_exits_or_interrupts_at_import_does_not_load(tmp_path, capsys, raised, said):
    module = tmp_path / "stops_at_import.py"
    module.write_text(f"import sys\n{raised}\n")
    assert main(["verify", "--no-bundled", "--no-cache", "--path", str(module)]) == 2
    assert f"cannot load {module} (line 2): {said}" in capsys.readouterr().err


def test_a_real_ctrl_c_while_a_section_builds_still_stops_the_run(tmp_path, capsys):
    """Only a KeyboardInterrupt that no Ctrl-C caused is a section's error: SIGINT itself stops the run (130)."""
    import signal

    d = _folder(tmp_path, STOPS.replace("raise KeyboardInterrupt", "import signal; signal.raise_signal(signal.SIGINT)"))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a shell (a test runner may differ)
    try:
        assert main(["verify", "--no-bundled", "--no-cache", "--path", str(d)]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "ERROR" not in capsys.readouterr().out


# --- did you mean, examples in --help, one table style (issue: the command line of ruff, uv and git) ---------------

def _usage_error(capsys, *args) -> str:
    """The message of a command line argparse refuses (exit status 2)."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_a_misspelt_command_suggests_the_command(capsys):
    err = _usage_error(capsys, "verfy")
    assert "invalid choice: 'verfy'; did you mean 'verify'?" in err


def test_a_misspelt_option_suggests_the_option(capsys):
    err = _usage_error(capsys, "verify", "--jsn=out.json")
    assert "symseq verify: error: unrecognized arguments: --jsn=out.json (did you mean --json?)" in err
    err = _usage_error(capsys, "audit", "page.md", "--fail-undr", "90")
    assert "--fail-undr (did you mean --fail-under?)" in err
    err = _usage_error(capsys, "audit", "page.md", "--format", "markdwn")
    assert "invalid choice: 'markdwn'; did you mean 'markdown'?" in err


def test_a_misspelt_derivation_name_suggests_the_name(capsys):
    assert main(["verify", "week8-decodr"]) == 2
    err = capsys.readouterr().err
    assert "'week8-decodr' matches none of the derivations; did you mean 'week08-decoder'?" in err


def test_an_ambiguous_prefix_lists_only_the_names_it_matched(capsys):
    assert main(["verify", "week06"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "symseq: error: 'week06' matches several of the derivations: week06-encoder, week06-rnn; give " \
                  "more of the name"


@pytest.mark.parametrize("command", ["list", "verify", "show", "latex", "figure", "new", "audit"])
def test_the_help_of_each_command_shows_examples(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    examples = out[out.index("\nexamples:\n"):].splitlines()[2:]
    assert [x for x in examples if x.startswith(f"  symseq {command}")], out


def test_the_help_of_audit_shows_its_examples_as_written(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    out = capsys.readouterr().out
    assert "\n  # in a GitHub workflow: an annotation on the line of each wrong number\n" \
           "  symseq audit page.md --output-format github\n" in out


def _lines(capsys, width, *args) -> list[str]:
    from symseq.cli import _console as real

    import symseq.cli as cli

    def narrow(args_, file=None):
        c = real(args_, file)
        c.width = width
        return c

    cli._console = narrow
    try:
        main(["--no-color", *args])
    finally:
        cli._console = real
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("width", [80, 60])
def test_list_never_splits_a_name(width, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = _lines(capsys, width, "list")
    names = [d.name for d in __import__("symseq.authoring", fromlist=["bundled"]).bundled()]
    for name in names:
        assert [x for x in lines if x.startswith(name + " ")], (name, lines)
    assert max(len(x.rstrip()) for x in lines) <= width


def test_verify_and_audit_draw_one_table_style_sized_to_their_content(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.md").write_text("# Sums\n\n2 · 3 + 1 = 7\n\n1 + 1 = 3\n", encoding="utf-8")
    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "sums.py").write_text(
        "import sympy as sp\nfrom symseq import Derivation\n\n"
        "derivation = Derivation('sums', title='Sums', source='sums.md')\n\n"
        "@derivation.section('1 sums')\ndef sums(s):\n    s.claim('7', sp.Integer(7), what='2 · 3 + 1')\n",
        encoding="utf-8")
    verify = _lines(capsys, 240, "verify", "sums", "--all", "--no-cache")
    audit = _lines(capsys, 240, "audit", "page.md", "--all")
    for out in (verify, audit):
        rules = [x for x in out if x and set(x.strip()) == {"━"}]
        assert rules, out  # a heavy rule under each header, no frame
        assert not any(ch in x for x in out for ch in "│┃┏┡└")
        assert max(len(x.strip()) for x in rules) < 130  # each table as wide as its content, not the terminal's 240
    assert audit[-1].startswith("page.md: 7 quantity tokens — 6 covered, 1 wrong")  # the summary is the last line
    assert audit[-2] == "audit failed: 1 wrong number(s)"
    head = "errata by cause (root: wrong even from the page's own printed operands)"
    assert [x.rstrip() for x in audit].index(head) < len(audit) - 2
