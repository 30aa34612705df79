"""Shared helpers of the presentation tests: the demo derivation and a real pdflatex run."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from symseq.authoring import from_path

DEMO_PATH = Path(__file__).parent / "data" / "present_demo.py"


def demo():
    """The demo derivation (tests/data/present_demo.py), built once per process."""
    (d,) = from_path(DEMO_PATH)
    return d


def pdflatex(tex: str, folder: Path, name: str = "doc", encoding: str = "ascii") -> str:
    """Compile ``tex`` once with pdflatex in ``folder``; return the log. Fails on any LaTeX error.

    The file is written in ``encoding``: ASCII for handout LaTeX; UTF-8 for Jupyter's, which keeps typography
    such as an em dash as it is (pdflatex reads UTF-8 since LaTeX 2018).

    Without pdflatex the test is skipped locally; on CI (CI set) it fails, since .ci/run installs it.
    """
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing; .ci/run installs texlive-latex-base and texlive-latex-recommended")
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    (folder / f"{name}.tex").write_text(tex, encoding=encoding)
    r = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{name}.tex"],
                       cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    log = (folder / f"{name}.log").read_text(errors="replace") if (folder / f"{name}.log").exists() else r.stdout
    assert r.returncode == 0, log[-3000:]
    assert (folder / f"{name}.pdf").stat().st_size > 1000
    assert "Missing character" not in log, [ln for ln in log.splitlines() if "Missing character" in ln][:5]
    return log


def pdftotext(pdf: Path) -> str:
    """The text of a PDF as ``pdftotext`` (poppler-utils) reads it; fails when it is missing, since a test that
    calls it has just compiled with pdflatex (.ci/run installs both)."""
    exe = shutil.which("pdftotext")
    if exe is None:
        pytest.fail("pdftotext is missing: apt-get install poppler-utils (.ci/run installs it with pdflatex)")
    r = subprocess.run([exe, "-enc", "UTF-8", str(pdf), "-"], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, errors="replace")
    assert r.returncode == 0, r.stderr
    return r.stdout
