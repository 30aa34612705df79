"""The layout is the pipeline: every import of the package points forward (DESIGN.md, "Layout").

Each module belongs to a stage; a module may import its own stage and earlier
ones, never a later one. Imports inside functions count as much as those at the
top of a module: a lazy import backwards is still a cycle in the design.
"""

import ast
from pathlib import Path

import symseq

ROOT = Path(symseq.__file__).parent

# stages in pipeline order; a module is in the first stage whose name prefixes it
STAGES = [
    ["symseq.errors", "symseq.collector", "symseq.cache"],
    ["symseq.numbers"],
    ["symseq.functions"],
    ["symseq.read"],  # the one reader of printed mathematics: below everything that reads a page or a claim
    ["symseq.ops"],
    ["symseq.arrays"],
    ["symseq.ledger"],
    ["symseq.blocks"],
    ["symseq.backends"],
    ["symseq.values"],
    ["symseq.derive"],
    ["symseq.verify"],
    ["symseq.authoring"],
    ["symseq.audit"],
    ["symseq.present"],
    ["symseq.cli", "symseq.pytest_plugin"],
    ["symseq.derivations"],  # the bundled handouts: content written with the public API
]
# entry points, not stages: the package facade re-exports the public API and registers the Jupyter display
FACADE = {"symseq"}
# loading derivations by name is discovery, not a dependency: the bundled ones are found as a package
DISCOVERY = {("symseq.authoring.discovery", "symseq.derivations"), ("symseq.pytest_plugin", "symseq.derivations")}


def _stage(module: str) -> int:
    for i, names in enumerate(STAGES):
        if any(module == n or module.startswith(n + ".") for n in names):
            return i
    raise AssertionError(f"{module} belongs to no stage of the pipeline; add it to STAGES")


def _module(path: Path) -> tuple[str, str]:
    """(module name, package that relative imports start from)."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def imports():
    """(importing module, imported symseq module, line) for every import in the package, wherever it sits."""
    out = []
    for f in sorted(ROOT.rglob("*.py")):
        name, package = _module(f)
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [target]
                if target in FACADE or node.module is None:  # "from . import ops": the names may be modules
                    targets = [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for t in targets:
                if t == "symseq" or t.startswith("symseq."):
                    out.append((name, t, node.lineno))
    return out


def test_the_walk_sees_imports_inside_functions():
    found = {(a, b) for a, b, _ in imports()}
    assert ("symseq.values", "symseq.backends.mpmath_backend") in found  # imported inside Values._env
    assert len(found) > 100


def test_every_import_points_forward_in_the_pipeline():
    backwards = []
    for src, target, line in imports():
        if src in FACADE or (src, target) in DISCOVERY or (src, target.rsplit(".", 1)[0]) in DISCOVERY:
            continue
        if target in FACADE:  # "import symseq" from inside the package
            backwards.append(f"{src}:{line} imports the package facade")
            continue
        if _stage(target) > _stage(src):
            backwards.append(f"{src}:{line} imports {target}")
    assert not backwards, "imports that point backwards in the pipeline:\n" + "\n".join(backwards)


def test_a_backward_import_would_be_caught():
    assert _stage("symseq.present.latex") > _stage("symseq.ledger")
    assert _stage("symseq.backends.torch_backend") > _stage("symseq.blocks.attention")
    assert _stage("symseq.present.views") > _stage("symseq.verify.claims")


def test_derivations_use_the_public_api_only():
    """The bundled derivations import symseq's exported names (``from symseq.derive import bptt``), never a
    module inside a package (``from symseq.derive.moments import …``), register helper-built ledgers
    with ``section.use``, not by reaching into ``section.ledgers``, and do no numerics of their own: values
    come from the derivation's Values service (``s.values``, ``s.agree``) or the backends, never from mpmath."""
    import symseq.derivations as pkg

    deep = []
    for f in sorted(Path(next(iter(pkg.__path__))).glob("*.py")):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.count(".") >= 2 \
                    and node.module.startswith(("symseq.derive.", "symseq.blocks.", "symseq.verify.")):
                deep.append(f"{f.name}:{node.lineno} from {node.module}")
            if isinstance(node, ast.Attribute) and node.attr in ("append", "extend") \
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "ledgers":
                deep.append(f"{f.name}:{node.lineno} .ledgers.{node.attr}")
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0] == "mpmath"
                    for a in node.names):
                deep.append(f"{f.name}:{node.lineno} imports mpmath: its own numerics")
    assert not deep, deep


EVALUATORS = ("symseq/ledger.py", "symseq/values.py", "symseq/backends/", "symseq/verify/autograd.py")


def _evaluations(source: str) -> list:
    """Lines that evaluate a node or run a ledger themselves: ops.evaluate, leaf_values, Ledger.run(kernel, env)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if f.attr == "evaluate" and isinstance(f.value, ast.Name) and f.value.id == "ops" \
                    or f.attr in ("leaf_values", "_eval_node") or f.attr == "run" and len(node.args) >= 2:
                out.append(node.lineno)
    return out


def test_values_are_computed_through_the_one_service():
    """Outside the ledger (which runs rows), the Values service (which owns what a derivation evaluates) and the
    array backends (``evaluate(L, "numpy")``, the autograd check built on them), nothing evaluates a node or runs a
    ledger: claims, displays, the audit and the renderers ask a :class:`~symseq.values.Values` service."""
    root = Path(symseq.__file__).parent
    found = []
    for f in sorted(root.rglob("*.py")):
        rel = f"symseq/{f.relative_to(root).as_posix()}"
        if not rel.startswith(EVALUATORS):
            found += [f"{rel}:{n}" for n in _evaluations(f.read_text())]
    assert not found, found
    assert _evaluations("v = ops.evaluate(node, k, env)\nenv = L.run(k, env, names)\nL.leaf_values(k)") == [1, 2, 3]
    assert _evaluations("values.numeric(node)\nreport.run()") == []


def test_one_integer_check_for_every_block():
    """Widths, lengths, IDs and class indices are read by arrays.integer alone: a block that repeats its
    isinstance(…, numbers.Integral) check would drift from the others' messages and rules."""
    import pathlib

    import symseq

    blocks = pathlib.Path(symseq.__file__).parent / "blocks"
    twins = [p.name for p in blocks.glob("*.py") if "bool) or not isinstance(" in p.read_text(encoding="utf-8")]
    assert twins == [], twins


def test_every_error_and_warning_is_exported_at_the_top():
    """An author catches symseq's errors as ``symseq.ShapeError`` …; none is reachable only from a submodule."""
    import inspect

    import symseq
    import symseq.errors as errors

    kinds = {n for n, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__}
    assert kinds and kinds <= set(symseq.__all__), sorted(kinds - set(symseq.__all__))
