"""symseq verify -j N: derivations built and decided in worker processes give the report of one process."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symseq.authoring import Derivation, from_path
from symseq.cli import main
from symseq.errors import ClaimError, SymseqError
from symseq.present.terminal import cause_lines, problems, summary
from symseq.verify.report import verify

# the rnn page's steps: a claim of h_1 that holds, a wrong step for h_2 (tanh(1.1265) is 0.810, a root) and the
# step for z_3 that uses its printed 0.809 (propagated)
CLAIM_H1 = 's.claim("0.753", h1, what="h1")'
STEP_H2 = 's.step("tanh(1.1265) ≈ 0.809", result=h2, what="h2")'
STEP_Z3 = 's.step("0.18 + 0.5 · 0.809 + 0.3 = 0.8845", result=z3, operands={"0.809": h2}, what="z3")'


def _steps_module(name: str, title: str, source: str, section: str, *lines: str) -> str:
    """The text of a derivation module whose one section builds the rnn page's ledger (h_1, h_2, z_3) and states
    ``lines``."""
    body = "".join(f"\n    {line}" for line in lines)
    return f'''import sympy as sp
from symseq import Derivation, exact

derivation = Derivation("{name}", title="{title}", source="{source}")

@derivation.section("{section}")
def steps(s):
    L = s.ledger()
    h1 = L.define("h_1", sp.tanh(exact("0.98")))
    h2 = L.define("h_2", sp.tanh(exact("0.45") + exact("0.5") * h1 + exact("0.3")))
    z3 = L.define("z_3", exact("0.18") + exact("0.5") * h2 + exact("0.3")){body}
'''


# three small author's derivations: steps with a root and a propagated erratum (causes), a section that fails
# inside a helper (its traceback), a wrong digit among claims that hold
MODULES = {
    "steps.py": _steps_module("rnn-steps", "rnn", "rnn.md", "Steps", CLAIM_H1, STEP_H2, STEP_Z3),
    "broken.py": '''
        import sympy as sp
        from symseq import Derivation

        derivation = Derivation("broken", title="Broken", source="b.md")

        def helper(x):
            return x / 0

        @derivation.section("§1 Fine")
        def fine(s):
            s.claim("0.3333", sp.Rational(1, 3), what="a third")

        @derivation.section("§2 A bug")
        def bug(s):
            s.claim("0.5", helper(1), what="never stated")
    ''',
    "digits.py": '''
        import sympy as sp
        from symseq import Derivation

        derivation = Derivation("digits", title="Digits", source="d.md")

        @derivation.section("§1 Numbers")
        def numbers(s):
            s.claim("0.7071", 1 / sp.sqrt(2), what="1/√2")
            s.claim("1.4143", sp.sqrt(2), what="√2")
            s.claim("(0.5, 0.25)", sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 4)]]), what="v")
    ''',
}


def _write(folder: Path) -> Path:
    folder.mkdir()
    for name, text in MODULES.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The same derivations in two folders, so each is loaded (and built) afresh: one for one process, one for two."""
    root = tmp_path_factory.mktemp("jobs")
    return _write(root / "one"), _write(root / "two")


def _cli(args, cwd):
    """symseq in a process of its own, as run from a shell: (exit status, standard output, standard error)."""
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-c", "import sys; from symseq.cli import main; sys.exit(main())", *args],
                          cwd=cwd, env=env, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def test_two_processes_give_the_report_of_one(folders):
    one, two = folders
    serial = verify(from_path(one), 50, jobs=1)
    ds = from_path(two)
    parallel = verify(ds, 50, jobs=2)
    # built and decided in the workers: each derivation holds their sections, claims with results but no quantity
    assert all(c.quantity is None for c in parallel.claims) and all(s.derivation is d for d in ds for s in d.sections)
    # the same but for the folder in the broken section's place (its error begins with the author's file and line)
    assert json.dumps(parallel.as_json()).replace(str(two), "") == json.dumps(serial.as_json()).replace(str(one), "")
    assert [c.id for c in parallel.claims] == [c.id for c in serial.claims]
    assert summary(parallel) == summary(serial) == ("7 claims in 3 derivation(s): 4 ok, 3 mismatch, "
                                                    "1 section(s) failed to build")
    assert [p.replace(str(two), "") for p in problems(parallel)] == [p.replace(str(one), "") for p in problems(serial)]
    assert cause_lines(parallel.causes) == cause_lines(serial.causes)
    assert [(c.kind, c.claim.what, [x.what for x in c.chain]) for c in parallel.causes] == \
        [("root", "h2", ["z3"]), ("propagated", "z3", [])]
    # the failing section's traceback, made in the worker, names the same helper line
    (error,) = [s.error for d in ds for s in d.sections if s.error]
    first = error.splitlines()[0]  # the author's line first: the helper's, called by the section
    line = next(i for i, ln in enumerate(textwrap.dedent(MODULES["broken.py"]).splitlines(), 1) if "x / 0" in ln)
    assert first == f"{two / 'broken.py'}:{line}: ZeroDivisionError: division by zero" and "return x / 0" in error
    assert error.replace(str(two), "") == next(s.error for d in from_path(one) for s in d.sections
                                               if s.error).replace(str(one), "")


def test_cli_json_and_output_are_those_of_one_process(folders, tmp_path):
    one, _ = folders
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}.json"
        runs[jobs] = _cli(["--traceback", "verify", "--no-bundled", "--path", str(one), "-j", jobs, "--json", str(out)],
                          tmp_path) + (out.read_text(encoding="utf-8"),)
    assert runs["2"] == runs["1"]
    status, stdout, _, records = runs["2"]
    assert status == 2  # a section did not build (and claims are wrong): the verdict, whatever the processes
    assert "ROOT rnn.md · Steps · h2" in stdout and "MISMATCH d.md · §1 Numbers · √2" in stdout
    assert "ZeroDivisionError" in stdout and "return x / 0" in stdout  # --traceback: the worker's, as printed by one
    assert [r["status"] for r in json.loads(records)["claims"]].count("mismatch") == 3


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_fewer_than_one_process_is_refused(jobs, capsys):
    with pytest.raises(SystemExit) as e:
        main(["verify", "-j", jobs])
    assert e.value.code == 2
    assert f"expected a number of processes, 1 or more (e.g. -j 2), got '{jobs}'" in capsys.readouterr().err
    with pytest.raises(SymseqError, match="1 or more"):
        verify([], jobs=0)


def test_a_module_that_fails_to_load_in_a_worker_is_reported_as_in_one_process(tmp_path):
    """A worker loads each derivation afresh: a module that no longer loads there raises what loading it raises in
    one process (its file and line), not a traceback of the process pool."""
    folder = _write(tmp_path / "d")
    (folder / "flaky.py").write_text(textwrap.dedent('''
        import multiprocessing
        from symseq import Derivation

        derivation = Derivation("flaky", title="Flaky", source="f.md")
        if multiprocessing.parent_process() is not None:
            raise RuntimeError("only in a worker")
    '''), encoding="utf-8")
    ds = [d for d in from_path(folder) if d.name in ("flaky", "digits")]
    with pytest.raises(ClaimError, match=r"cannot load .*flaky\.py \(line 7\): RuntimeError: only in a worker"):
        verify(ds, jobs=2)


def test_a_failing_claim_is_never_put_down_to_a_step_of_another_page():
    """Causes are a page's own: a wrong h_2 on one page has nothing to do with another page's wrong step for its
    own h_2 (classified together, the second page's claim was listed in the first page's chain)."""
    import sympy as sp

    from symseq import Derivation, exact

    def page(source, stated):
        d = Derivation(f"page-{source}", title=source, source=source)

        @d.section("Steps")
        def _(s):
            L = s.ledger()
            h1 = L.define("h_1", sp.tanh(exact("0.98")))
            h2 = L.define("h_2", sp.tanh(exact("0.45") + exact("0.5") * h1 + exact("0.3")))
            stated(s, h2)

        return d

    a = page("a.md", lambda s, h2: s.step("tanh(1.1265) ≈ 0.809", result=h2, what="h2"))
    b = page("b.md", lambda s, h2: s.claim("0.811", h2, what="h2"))
    report = verify([a, b], 50)
    from symseq.verify.causes import classify_claims

    together = classify_claims(report.claims)  # what symseq verify printed: b.md's h2 in a.md's chain
    assert [x.source for x in together[0].chain] == ["b.md"]
    assert [c.status for c in (x.result for x in report.claims)] == ["mismatch", "mismatch"]
    ((root,),) = [[c for c in report.causes if c.claim.source == "a.md"]]
    assert root.kind == "root" and root.chain == []
    assert not [c for c in report.causes if c.claim.source == "b.md"]


# one page, two derivations: a wrong step in one, the step that uses its printed result in the other
SPLIT = {"first.py": _steps_module("split-first", "rnn, first half", "split.md", "Steps, first half", CLAIM_H1,
                                   STEP_H2),
         "second.py": _steps_module("split-second", "rnn, second half", "split.md", "Steps, second half", STEP_Z3)}


def test_the_derivations_of_one_page_are_shared_out_among_the_processes(folders):
    # week06-encoder and week06-rnn print on one page: decided in one task, they kept -j 2 from balancing
    from symseq.verify.report import _tasks

    one, _ = folders
    ds = from_path(one)
    first, second = Derivation("a", title="a", source="p.md"), Derivation("b", title="b", source="p.md")
    first.module = second.module = ds[0].module
    groups, tasks = _tasks([first, second])
    assert [[d for d, _ in g] for g in groups] == [[first, second]]
    assert sorted(d.name for [(d, _)] in tasks) == ["a", "b"]


def test_a_page_split_over_processes_is_classified_with_all_its_steps(tmp_path):
    for name, files in (("one", SPLIT), ("two", SPLIT)):
        folder = tmp_path / name
        folder.mkdir()
        for file, text in files.items():
            (folder / file).write_text(textwrap.dedent(text), encoding="utf-8")
    serial = verify(from_path(tmp_path / "one"), 50, jobs=1)
    parallel = verify(from_path(tmp_path / "two"), 50, jobs=2)
    assert [(c.kind, c.claim.what, [x.what for x in c.chain]) for c in parallel.causes] == \
        [(c.kind, c.claim.what, [x.what for x in c.chain]) for c in serial.causes]
    assert [(c.kind, c.claim.what) for c in serial.causes] == [("root", "h2"), ("propagated", "z3")]
    assert parallel.as_json() == serial.as_json()
