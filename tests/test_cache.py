"""The cache of decided derivations (symseq.cache): a second run adopts what the first decided, and any change to
what a derivation reads (its module, a helper it imports, a data file, symseq itself) builds it again.

Each test runs the command line in fresh processes, as an author does, over an author's folder whose sections
append a line to a log when they are built: the log says whether a run built or adopted.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from symseq.cache import Cache, environment, project_files, watching

MODULE = '''
import sys
from pathlib import Path

import sympy as sp

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from _helper import half  # noqa: E402

from symseq import Derivation  # noqa: E402

derivation = Derivation("cached", title="Cached", source="cached.md")


@derivation.section("One")
def one(s):
    with open(HERE.parent / "built.log", "a") as log:
        log.write("built\\n")
    scale = sp.Rational((HERE / "scale.txt").read_text().strip())
    s.claim("PRINTED", half() * scale, what="a half, scaled")
'''


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "derivations"
    folder.mkdir()
    (folder / "cached.py").write_text(MODULE.replace("PRINTED", "0.5"), encoding="utf-8")
    (folder / "_helper.py").write_text("import sympy as sp\n\n\ndef half():\n    return sp.Rational(1, 2)\n",
                                       encoding="utf-8")
    (folder / "scale.txt").write_text("1\n", encoding="utf-8")
    return tmp_path


def run(project, *args, cache=True):
    """``symseq ARGS`` in a fresh process in ``project`` (its ./derivations only), the cache in project/cache."""
    env = {**os.environ, "SYMSEQ_CACHE_DIR": str(project / "cache"), "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("SYMSEQ_NO_CACHE", None)  # the suite turns it off for the commands it runs in this process
    command = [sys.executable, "-m", "symseq.cli", *args, "--no-bundled"] + ([] if cache else ["--no-cache"])
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)


def builds(project) -> int:
    log = project / "built.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def verify(project, *, cache=True):
    done = run(project, "verify", "--json", "-", cache=cache)
    return done.returncode, json.loads(done.stdout)


def test_a_second_verify_adopts_the_first_ones_decisions_with_the_same_report(project):
    first = verify(project)
    assert first[0] == 0 and first[1]["counts"]["ok"] == 1
    assert builds(project) == 1
    second = verify(project)
    assert builds(project) == 1  # adopted, not built
    assert second == first
    assert verify(project, cache=False) == first and builds(project) == 2  # the same as a run without the cache


def test_an_edited_derivation_is_built_again(project):
    verify(project)
    module = project / "derivations" / "cached.py"
    module.write_text(MODULE.replace("PRINTED", "0.6"), encoding="utf-8")
    code, report = verify(project)
    assert builds(project) == 2
    assert code == 1 and report["claims"][0]["printed"] == "0.6" and report["counts"]["mismatch"] == 1


def test_an_edited_helper_module_is_built_again(project):
    verify(project)
    (project / "derivations" / "_helper.py").write_text(
        "import sympy as sp\n\n\ndef half():\n    return sp.Rational(3, 5)\n", encoding="utf-8")
    code, report = verify(project)
    assert builds(project) == 2
    assert code == 1 and report["claims"][0]["value"][0].startswith("0.6")


def test_an_edited_data_file_is_built_again(project):
    verify(project)
    (project / "derivations" / "scale.txt").write_text("2\n", encoding="utf-8")
    code, report = verify(project)
    assert builds(project) == 2
    assert code == 1 and report["claims"][0]["value"][0].startswith("1.0")


def test_another_precision_is_decided_afresh(project):
    verify(project)
    done = run(project, "verify", "--dps", "30")
    assert done.returncode == 0 and builds(project) == 2


def test_no_cache_neither_reads_nor_writes_it(project, monkeypatch):
    verify(project, cache=False)
    assert not (project / "cache").exists()
    verify(project)
    verify(project, cache=False)
    assert builds(project) == 3
    monkeypatch.setenv("SYMSEQ_NO_CACHE", "1")
    assert not Cache(project / "cache").enabled and Cache(project / "cache", enabled=True).enabled


def test_a_damaged_entry_is_a_miss_not_an_error(project):
    verify(project)
    pages = list((project / "cache").rglob("*.pickle"))
    assert pages
    for p in pages:
        p.write_bytes(b"not a pickle")
    code, report = verify(project)
    assert code == 0 and report["counts"]["ok"] == 1 and builds(project) == 2


def test_list_reads_the_manifest_without_importing_the_module(project):
    assert run(project, "list").returncode == 0
    imports = project / "imports.log"
    module = project / "derivations" / "cached.py"
    module.write_text(module.read_text() + f"\nopen({str(imports)!r}, 'a').write('imported\\n')\n", encoding="utf-8")
    first = run(project, "list")  # the module changed: imported once, its manifest written again
    second = run(project, "list")
    assert first.returncode == second.returncode == 0 and "cached" in second.stdout
    assert imports.read_text().splitlines() == ["imported"]
    assert second.stdout == first.stdout


def test_the_author_loop_imports_only_what_it_uses(project):
    """An audit of a page no derivation claims loads neither the blocks, the backends, the derivation modules nor
    torch; symseq list loads no SymPy either."""
    page = project / "page.md"
    page.write_text("The sum is 0.25 + 0.5 = 0.75, and 2 · 0.75 = 1.5.\n", encoding="utf-8")
    probe = textwrap.dedent("""
        import sys
        from symseq.cli import main
        code = main(sys.argv[1:])
        heavy = [m for m in ("symseq.blocks", "symseq.backends", "symseq.derive", "symseq.authoring.derivation",
                             "torch", "matplotlib", "numba", "sympy") if m in sys.modules]
        print("LOADED", heavy, code)
    """)
    env = {**os.environ, "SYMSEQ_CACHE_DIR": str(project / "cache")}
    env.pop("SYMSEQ_NO_CACHE", None)

    def loaded(*args):
        done = subprocess.run([sys.executable, "-c", probe, *args, "--no-bundled"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=300)
        return done.stdout.strip().splitlines()[-1] if "LOADED" in done.stdout else done.stdout + done.stderr

    run(project, "list")  # the manifest of ./derivations
    assert loaded("audit", str(page), "--no-local") == "LOADED ['sympy'] 0"
    assert loaded("audit", str(page)) == "LOADED ['sympy'] 0"  # ./derivations described by its manifest
    assert loaded("list") == "LOADED [] 0"


def test_version_loads_no_sympy(project):
    probe = "import sys\nfrom symseq.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n" \
            "print('sympy' in sys.modules, 'rich' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["symseq", "0.1.0", "False", "False"]


def test_the_files_a_build_reads_are_recorded_and_installed_ones_left_out(tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("1", encoding="utf-8")
    with watching() as seen:
        data.read_text()
        import sympy  # noqa: F401  an installed package: keyed by the environment, not as a file
        (tmp_path / "written.txt").write_text("x")  # written, not read
    files = project_files(seen)
    assert list(files) == [str(data.resolve())]
    assert len(files[str(data.resolve())]) == 64


def test_a_changed_environment_invalidates_every_manifest(tmp_path, monkeypatch):
    module = tmp_path / "m.py"
    module.write_text("x = 1\n", encoding="utf-8")
    cache = Cache(tmp_path / "cache", enabled=True)
    cache.remember(module, [{"name": "m"}], {})
    assert cache.manifest(module)["derivations"] == [{"name": "m"}]
    monkeypatch.setattr("symseq.cache._ENVIRONMENT", environment() + "-other")  # another symseq or SymPy
    assert cache.manifest(module) is None


def test_a_pages_causes_come_back_from_the_cache(tmp_path):
    """A wrong step (0.42 edited to 0.45) is classified as a root in the first run and, adopted, in the second."""
    from pathlib import Path

    folder = tmp_path / "derivations"
    folder.mkdir()
    examples = Path(__file__).parent / "data" / "examples"
    (folder / "dog.py").write_text((examples / "derivations" / "attention_dog_ran_quickly_notebook.py").read_text(
        encoding="utf-8"), encoding="utf-8")
    page = (examples / "attention-dog-ran-quickly-notebook.ipynb").read_text(encoding="utf-8")
    assert page.count(r"\\approx 0.42") == 1  # the derivation reads its step from the page beside it
    (folder / "attention-dog-ran-quickly-notebook.ipynb").write_text(
        page.replace(r"\\approx 0.42", r"\\approx 0.45"), encoding="utf-8")
    first, second, fresh = (run(tmp_path, "verify", "--failures", cache=c) for c in (True, True, False))
    assert first.returncode == second.returncode == fresh.returncode == 1
    assert "ROOT attention-dog-ran-quickly-notebook.ipynb · 4. Step 2" in second.stdout
    assert first.stdout == second.stdout == fresh.stdout
    assert len(list((tmp_path / "cache").rglob("*.pickle"))) == 1


def test_the_grammars_parser_tables_are_kept_in_the_cache_and_only_there(tmp_path):
    """An audit keeps the LALR tables of the grammar of printed mathematics in the cache folder (one file, named by
    the grammar's hash), and a later process reads them; with --no-cache nothing is written."""
    page = tmp_path / "page.md"
    page.write_text("A step: 2.0 · 0.4621 = 0.9242, and 12,832 = 12,832.\n", encoding="utf-8")
    env = dict(os.environ, SYMSEQ_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("SYMSEQ_NO_CACHE", None)
    run = [sys.executable, "-c", "import sys; from symseq.cli import main; sys.exit(main())", "audit", str(page)]
    off = subprocess.run(run + ["--no-cache"], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert off.returncode == 0, off.stderr
    assert not (tmp_path / "cache").exists()
    for _ in range(2):
        on = subprocess.run(run, env=env, capture_output=True, text=True, cwd=tmp_path)
        assert on.returncode == 0 and on.stdout == off.stdout, on.stderr
    assert len(list((tmp_path / "cache").rglob("grammar-*.lark-tables"))) == 1
