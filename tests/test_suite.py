"""The test suite's own promises: collecting it imports no torch and builds no derivation, and symseq's cache of
built derivations goes to a folder of the session's own."""

import os
from pathlib import Path

pytest_plugins = ["pytester"]


def test_collecting_imported_no_torch(imported_by_collection):
    assert "torch" not in imported_by_collection, sorted(imported_by_collection)


def test_collecting_built_no_derivation(pytester):
    """Collect the modules that test every bundled derivation, claim or ledger, in a process of their own: torch is
    not imported and no derivation is built (each is built by the first test that needs it)."""
    tests = Path(__file__).resolve().parent
    pytester.syspathinsert(tests)
    pytester.makeconftest((tests / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(probe="""
        import sys

        def pytest_collection_finish(session):
            from symseq.authoring import bundled

            built = [d.name for d in bundled() if d._sections is not None]
            print("PROBE torch=%s built=%s" % ("torch" in sys.modules, built))
    """)
    names = ["test_derivations.py", "test_compiled.py", "test_compiled_parity.py", "test_torch_modules.py",
             "test_block_properties.py", "test_audit.py"]
    result = pytester.runpytest_subprocess("-p", "probe", "-p", "no:cacheprovider", "--collect-only", "-q",
                                           *[str(tests / n) for n in names])
    result.stdout.fnmatch_lines(["PROBE torch=False built=[[][]]"])


def test_the_cache_folder_is_the_sessions_own(tmp_path_factory):
    folder = Path(os.environ["SYMSEQ_CACHE_DIR"])
    assert folder.is_dir() and folder.is_relative_to(tmp_path_factory.getbasetemp())
