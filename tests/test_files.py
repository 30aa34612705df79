"""Output files (symseq.present.files): only regular files are written, never an input, never over a link, a FIFO
or a device; a folder that cannot be written is a clear error (exit 3), not a traceback."""

import os
import stat
import tempfile
import uuid
from pathlib import Path

import pytest

from symseq.cli import main
from symseq.errors import FileSystemError, SymseqError
from symseq.present.files import check_target, write_atomic

HANDOUT = "A half\n\nThe value is 0.5.\n"
DERIVATION = '''
import sympy as sp
from symseq import Derivation

derivation = Derivation("one-half", title="a half", source="half.txt")

@derivation.section("A half")
def half(s):
    s.claim("0.5", sp.Rational(1, 2), what="a half")
    s.heatmap("A", sp.Matrix([[1, 0], [sp.Rational(1, 2), sp.Rational(1, 2)]]), allowed="causal")
'''
SUMS = "# Sums\n\nz = 0.8 · 0.5 + 0.1 = 0.5\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with an author's derivation and its handout, as the current folder."""
    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "half.py").write_text(DERIVATION)
    (tmp_path / "half.txt").write_text(HANDOUT)
    (tmp_path / "sums.md").write_text(SUMS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _verify_json(target, *more):
    return main(["--no-color", "verify", "--no-bundled", "--json", str(target), *more])


def test_a_symbolic_link_is_refused_not_replaced(project, capsys):
    (project / "kept.json").write_text("old")
    os.symlink("kept.json", project / "link.json")
    assert _verify_json("link.json") == 2
    assert "link.json is a symbolic link" in capsys.readouterr().err
    assert os.path.islink(project / "link.json") and (project / "kept.json").read_text() == "old"
    # --force does not change it: symseq never replaces a link by a regular file
    assert main(["latex", "--no-bundled", "one-half", "-o", "link.json", "--force"]) == 2
    assert os.path.islink(project / "link.json") and (project / "kept.json").read_text() == "old"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_is_refused_not_replaced(project, capsys):
    os.mkfifo(project / "pipe")
    assert _verify_json("pipe") == 2
    assert "pipe is a named pipe (FIFO)" in capsys.readouterr().err
    assert main(["latex", "--no-bundled", "one-half", "-o", "pipe", "--force"]) == 2
    assert stat.S_ISFIFO(os.lstat(project / "pipe").st_mode)


def test_a_device_node_is_refused_not_replaced(project, capsys):
    try:
        os.mknod(project / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError):
        pytest.skip("creating a device node needs privileges this run does not have")
    assert _verify_json("null") == 2
    assert "null is a character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(project / "null").st_mode)


def test_the_null_device_is_refused_before_anything_is_written():
    # (checked only: a symseq that wrote here would replace the system's /dev/null)
    with pytest.raises(SymseqError, match="is a character device; symseq writes only regular files"):
        check_target(os.devnull, force=True)


def test_the_handout_is_never_overwritten_by_its_report(project, capsys):
    assert main(["--no-color", "audit", "half.txt", "--json", "half.txt"]) == 2
    assert "half.txt is an input of this command" in capsys.readouterr().err
    assert (project / "half.txt").read_text() == HANDOUT
    os.link(project / "half.txt", project / "hard.txt")  # the same file under another name
    assert main(["--no-color", "audit", "half.txt", "--json", "hard.txt"]) == 2
    assert main(["--no-color", "audit", "half.txt", "--json", f"../{project.name}/./half.txt"]) == 2
    assert (project / "half.txt").read_text() == HANDOUT
    # nor a derivation module by the LaTeX or JSON written for it
    assert main(["latex", "--no-bundled", "one-half", "-o", "derivations/half.py", "--force"]) == 2
    assert _verify_json("derivations/half.py") == 2
    assert "import sympy" in (project / "derivations" / "half.py").read_text()
    assert main(["--no-color", "audit", "half.txt", "--json", "report.json"]) == 0  # elsewhere it is written


def test_a_folder_that_cannot_be_written_is_a_clear_error(project, capsys, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refused)  # as a read-only folder does (whoever runs the test)
    assert main(["--no-color", "audit", "half.txt", "--json", "out/report.json", "--mkdir"]) == 3
    err = capsys.readouterr().err
    assert "cannot write out/report.json: the folder out is not writable (Permission denied)" in err
    assert "Traceback" not in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="the superuser writes read-only folders")
def test_a_read_only_folder_is_a_clear_error(project, capsys):
    (project / "ro").mkdir()
    os.chmod(project / "ro", 0o555)
    try:
        assert _verify_json("ro/claims.json") == 3
    finally:
        os.chmod(project / "ro", 0o755)
    assert "is not writable" in capsys.readouterr().err


def test_a_path_through_a_file_is_a_clear_error(project, capsys):
    assert _verify_json("half.txt/claims.json") == 2
    err = capsys.readouterr().err
    assert "cannot write half.txt/claims.json: half.txt is not a folder but a file" in err and "Traceback" not in err


def test_an_interrupted_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.tex"
    target.write_text("old")

    def fails(f):
        f.write("half of the new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, fails, force=True)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.tex"]


def test_a_full_disk_is_a_clear_error(tmp_path):
    def full(f):
        raise OSError(28, "No space left on device")

    with pytest.raises(FileSystemError, match="cannot write .*out.json: No space left on device"):
        write_atomic(tmp_path / "out.json", full, force=True)
    assert list(tmp_path.iterdir()) == []


def test_a_regular_file_is_replaced_only_when_asked(tmp_path):
    target = tmp_path / "a.tex"
    write_atomic(target, lambda f: f.write("one"))
    with pytest.raises(SymseqError, match="exists; pass --force"):
        write_atomic(target, lambda f: f.write("two"))
    os.chmod(target, 0o640)
    write_atomic(target, lambda f: f.write("two"), force=True)
    assert target.read_text() == "two" and stat.S_IMODE(os.stat(target).st_mode) == 0o640
    with pytest.raises(SymseqError, match="is a folder"):
        check_target(tmp_path, force=True)


# every command that writes a file, as (arguments before the options, the file's extension)
WRITERS = {
    "verify --json": (["verify", "--no-bundled", "--json"], ".json"),
    "audit --json": (["audit", "half.txt", "--json"], ".json"),
    "audit --json, no derivation": (["audit", "--no-local", "sums.md", "--json"], ".json"),
    "latex -o": (["latex", "--no-bundled", "one-half", "-o"], ".tex"),
    "figure -o": (["figure", "--no-bundled", "one-half", "A", "-o"], ".png"),
}


def _write(writer, target, *options):
    args, _ = WRITERS[writer]
    if writer.startswith("figure"):
        pytest.importorskip("matplotlib")
    return main(["--no-color", *args, str(target), *options])


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_to_overwrite_a_file_without_force(project, capsys, writer):
    target = project / f"out{WRITERS[writer][1]}"
    target.write_text("kept")
    assert _write(writer, target) == 2
    assert f"{target} exists; pass --force to overwrite it" in capsys.readouterr().err
    assert target.read_text() == "kept"
    assert _write(writer, target, "--force") == 0
    assert target.read_bytes() != b"kept" and target.stat().st_size > 0


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_makes_a_missing_folder_only_when_asked(project, capsys, writer):
    target = project / "reports" / "week" / f"out{WRITERS[writer][1]}"
    assert _write(writer, target) == 2
    err = capsys.readouterr().err
    assert f"the folder {target.parent} does not exist (nor does {project / 'reports'}); pass --mkdir" in err
    assert not (project / "reports").exists()
    assert _write(writer, target, "--mkdir") == 0
    assert target.is_file() and [p.name for p in target.parent.iterdir()] == [target.name]


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_refuses_a_path_through_a_file(project, capsys, writer):
    target = project / "half.txt" / "sub" / f"out{WRITERS[writer][1]}"
    assert _write(writer, target, "--mkdir", "--force") == 2
    err = capsys.readouterr().err
    assert f"cannot write {target}: {project / 'half.txt'} is not a folder but a file" in err
    assert "Traceback" not in err and (project / "half.txt").read_text() == HANDOUT


@pytest.mark.parametrize("writer", WRITERS)
def test_no_writer_makes_a_folder_at_the_root_of_the_file_system(project, capsys, writer):
    top = Path("/") / f"symseq-test-{uuid.uuid4().hex}"
    target = top / "sub" / f"out{WRITERS[writer][1]}"
    assert _write(writer, target, "--mkdir") == 2
    assert f"symseq does not create folders at the root of the file system ({top})" in capsys.readouterr().err
    assert not top.exists()


def test_the_root_rule_is_decided_before_any_work_and_allows_deeper_folders(tmp_path):
    with pytest.raises(SymseqError, match="root of the file system"):
        check_target("/symseq-no-such-folder/out.json", mkdir=True)
    with pytest.raises(SymseqError, match="pass --mkdir"):
        check_target(tmp_path / "a" / "out.json")
    assert check_target(tmp_path / "a" / "b" / "out.json", mkdir=True) == tmp_path / "a" / "b" / "out.json"
    assert not (tmp_path / "a").exists()  # checking creates nothing; write_atomic does, when asked
    write_atomic(tmp_path / "a" / "b" / "out.json", lambda f: f.write("{}"), mkdir=True)
    assert (tmp_path / "a" / "b" / "out.json").read_text() == "{}"


def test_new_makes_its_own_derivations_folder_and_never_overwrites(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "my-page"]) == 0  # ./derivations is the command's own folder: made without --mkdir
    assert (tmp_path / "derivations" / "my_page.py").is_file() and (tmp_path / "conftest.py").is_file()
    assert main(["new", "my-page"]) == 2
    assert "already exists; symseq new never overwrites a file" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "derivations").write_text("not a folder")
    monkeypatch.chdir(other)
    assert main(["new", "my-page"]) == 2
    err = capsys.readouterr().err
    assert "cannot write derivations/my_page.py: derivations is not a folder but a file" in err
    assert "Traceback" not in err
