"""Ctrl-C stops ``symseq verify -j 2`` at once and leaves no partial file (it took 13–39 s, waiting for every task
queued in the worker processes). Measured as work left undone, not as a time: each derivation below marks when it
starts and when it finishes its (CPU-bound) section; an interrupted run must exit with 130, write no JSON and leave
derivations unfinished. The seconds measured are printed (pytest -s shows them)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

N = 6  # derivations: three rounds of two workers

MODULE = textwrap.dedent('''
    from pathlib import Path

    import sympy as sp

    from symseq import Derivation

    NAME = Path(__file__).stem
    derivation = Derivation(NAME, title=NAME, source=NAME + ".md")


    @derivation.section("Busy")
    def busy(s):
        marks = Path(__file__).parent.parent / "marks"
        (marks / ("started-" + NAME)).touch()
        total = sum(i * i % 7 for i in range(12_000_000))  # a few seconds of CPU
        (marks / ("done-" + NAME)).touch()
        s.claim(str(total), sp.Integer(total), what="the sum")
''')


def _project(tmp_path):
    (tmp_path / "derivations").mkdir()
    (tmp_path / "marks").mkdir()
    for i in range(N):
        (tmp_path / "derivations" / f"busy{i}.py").write_text(MODULE, encoding="utf-8")
    return tmp_path


def _interrupted(tmp_path, group: bool):
    """Run verify -j 2, send SIGINT once a worker has started a section (to the process, or to its group as a
    terminal's Ctrl-C does); return (exit status, seconds from the signal to the exit, marks left, stderr)."""
    root = _project(tmp_path)
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from symseq.cli import main; sys.exit(main())",
                             "verify", "-j", "2", "--no-cache", "--no-bundled", "--path", "derivations",
                             "--json", "out.json"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        while not any((root / "marks").iterdir()):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        start = time.monotonic()
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)  # a hang fails here
        seconds = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, seconds, sorted(p.name for p in (root / "marks").iterdir()), err


def _check(tmp_path, group):
    status, seconds, marks, err = _interrupted(tmp_path, group)
    print(f"SIGINT to the {'group' if group else 'process'}: exit {status} {seconds:.2f} s after the signal; "
          f"marks {marks}")
    assert status == 130, err
    assert not (tmp_path / "out.json").exists()  # no partial file, and no report of a run not finished
    assert len([m for m in marks if m.startswith("done-")]) < N  # stopped before all the work was done
    assert "Traceback" not in err, err


def test_ctrl_c_to_verify_stops_its_workers(tmp_path):
    _check(tmp_path, group=False)


@pytest.mark.slow  # a second run of the same: the signal a terminal sends, to every process of the group
def test_ctrl_c_from_a_terminal_stops_verify_and_its_workers(tmp_path):
    _check(tmp_path, group=True)
