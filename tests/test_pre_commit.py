"""The pre-commit hooks of ``.pre-commit-hooks.yaml``, run by pre-commit itself on a small git repository of
handouts: a right page passes, a page with a wrong number fails the commit and names the number and its line.

``pre-commit try-repo`` runs the hooks of this repository (its working tree, uncommitted changes included) without
network: ``symseq-audit-system`` runs the ``symseq`` of the environment the tests run in. ``symseq-audit``
(``language: python``) differs from it only by the environment pre-commit installs symseq into, which needs the
package index; the test checks that the two hooks are otherwise the same."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit, in the test extra")

ROOT = Path(__file__).resolve().parents[1]
RIGHT = """# A tanh step by hand

## 1. One tanh step

Take x = 0.5, w = 0.8 and b = 0.1.

z = w x + b = 0.8 · 0.5 + 0.1 = 0.5

h = tanh(0.5) = 0.4621
"""
WRONG = RIGHT + "\nThe scores are 2 and 3, so 2 · 3 + 1 = 8.\n"  # line 11


def test_the_two_hooks_differ_only_by_their_environment():
    python, system = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert (python["id"], python["language"], system["id"], system["language"]) == \
        ("symseq-audit", "python", "symseq-audit-system", "system")
    same = ("entry", "files", "exclude", "require_serial")
    assert {k: python[k] for k in same} == {k: system[k] for k in same}
    assert python["entry"] == "symseq audit"
    files, exclude = re.compile(python["files"]), re.compile(python["exclude"])
    chosen = [p for p in ("week6.md", "notes/a.tex", "lab.ipynb", "page.html", "seed.txt", "README.md",
                          "docs/CHANGELOG.md", "requirements.txt", "code.py")
              if files.search(p) and not exclude.search(p)]
    assert chosen == ["week6.md", "notes/a.tex", "lab.ipynb", "page.html", "seed.txt"]


@pytest.fixture
def handouts(tmp_path):
    """A git repository of two handouts, staged."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra: pip install -e '.[test]'")
    repo = tmp_path / "handouts"
    repo.mkdir()
    (repo / "right.md").write_text(RIGHT, encoding="utf-8")
    (repo / "wrong.md").write_text(WRONG, encoding="utf-8")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), SYMSEQ_NO_CACHE="1",
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="a",
               GIT_COMMITTER_EMAIL="a@example.org")
    env.pop("PRE_COMMIT", None)
    subprocess.run(["git", "init", "-q", "."], cwd=repo, env=env, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, env=env, check=True)
    return repo, env


def _hook(handouts, *files):
    repo, env = handouts
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "symseq-audit-system",
                           "--files", *files], cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_the_hook_passes_a_right_page(handouts):
    r = _hook(handouts, "right.md")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "symseq audit (symseq of the current environment)" in r.stdout and "Passed" in r.stdout


def test_the_hook_fails_a_page_with_a_wrong_number(handouts):
    r = _hook(handouts, "right.md", "wrong.md")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Failed" in r.stdout and "- exit code: 1" in r.stdout
    assert "wrong.md: 15 quantity tokens — 9 covered, 1 wrong" in r.stdout  # the summary of the wrong page, from symseq audit
    assert re.search(r"^11 +8 +7 +the units digit: printed 8, correct 7", r.stdout, re.M), r.stdout  # the erratum
