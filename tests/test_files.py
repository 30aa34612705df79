"""Output files (symseq.present.files): only regular files are written, never an input, never over a link, a FIFO
or a device; a folder that cannot be written is a clear error (exit 3), not a traceback."""

import os
import stat
import tempfile

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
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A folder with an author's derivation and its handout, as the current folder."""
    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "half.py").write_text(DERIVATION)
    (tmp_path / "half.txt").write_text(HANDOUT)
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
    assert main(["--no-color", "audit", "half.txt", "--json", "out/report.json"]) == 3
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
    assert _verify_json("half.txt/claims.json") == 3
    err = capsys.readouterr().err
    assert "cannot write half.txt/claims.json: half.txt is not a folder" in err and "Traceback" not in err


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
