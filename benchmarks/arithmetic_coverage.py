"""How much of a page's own arithmetic the derivation-free audit checks, against hand labels.

    python benchmarks/arithmetic_coverage.py            # a table per handout and the total
    python benchmarks/arithmetic_coverage.py --list     # and every labelled statement with its outcome

For each seed handout (from ../shared/seeds beside the repository, or $SYMSEQ_SEEDS) and each worked example in
tests/data/examples, the hand labels in tests/data/arithmetic_labels/<file>.txt list the arithmetic statements a
person can verify by hand (see that folder's README). ``symseq audit FILE`` with no derivation
(:func:`symseq.audit.arithmetic.audit_arithmetic`) is run on the file, and each of its statements is matched to a
label by line and printed result. Printed per file:

- labelled: statements a person can verify by hand;
- decided: labelled statements the audit decides: ok, wrong, or drift (a result that is not the value of its
  printed operands but lies within their rounding, which only a derivation's true values can settle);
- right: decided statements whose verdict is the label's;
- false errata: statements the audit calls wrong that are not labelled wrong (the goal is 0); a result the audit
  passes that is labelled wrong or drift is a false all-clear (the goal is 0); the audit calling drift what the
  label calls wrong (it took a printed operand such as 0.55 as rounded where the page computed it exactly) is a
  disagreement that passes nothing;
- unlabelled: statements the audit checks that no label lists (each is a labelling gap or a misreading).

The goal (issue 13): decided ≥ 50% of labelled overall, with 0 false errata.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = Path(os.environ.get("SYMSEQ_SEEDS") or ROOT.parent / "shared" / "seeds")
EXAMPLES = ROOT / "tests" / "data" / "examples"
LABELS = ROOT / "tests" / "data" / "arithmetic_labels"


@dataclass
class Label:
    line: int
    verdict: str  # ok, wrong, drift or propagated (right from an earlier wrong number it uses)
    result: str
    text: str


@dataclass
class Score:
    name: str
    labels: list
    decided: list = field(default_factory=list)  # (label, audit status)
    right: int = 0
    false_errata: list = field(default_factory=list)  # audit statements called wrong, not labelled wrong
    wrong_verdicts: list = field(default_factory=list)  # (label, audit status) that disagree
    false_all_clear: list = field(default_factory=list)  # (label, "ok"): the audit passed a result labelled wrong
    unlabelled: list = field(default_factory=list)


def files() -> list[Path]:
    """The handouts that have labels: the seeds present on this machine and the worked examples."""
    out = []
    for lab in sorted(LABELS.glob("*.txt")):
        name = lab.name[: -len(".txt")]
        for folder in (SEEDS, EXAMPLES):
            if (folder / name).is_file():
                out.append(folder / name)
    return out


def load_labels(path: Path, folder: Path = LABELS) -> list[Label]:
    """The labels of the page ``path``: ``folder/<file name>.txt``, one tab-separated line per statement (line,
    verdict, result as printed, the statement; a fifth column, the value recomputed, is not read)."""
    lab = folder / (path.name + ".txt")
    out = []
    for raw in lab.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        line, verdict, result, text = raw.split("\t")[:4]
        assert verdict in ("ok", "wrong", "drift", "propagated"), raw
        out.append(Label(int(line), verdict, result.strip(), text))
    return out


def _norm(text: str) -> str:
    """A printed result as its numbers alone: brackets, parentheses, spaces and LaTeX spacing dropped, so that a
    label's [0.2, 0.9] and the page's (0.2,\\;0.9) match."""
    text = text.replace("\\[", "").replace("\\]", "").replace("−", "-")
    text = re.sub(r"\\[,;:! ]", "", text)  # LaTeX spacing: (-1.96,\;1.61) is (-1.96,1.61)
    return "".join(ch for ch in text if ch not in "[]() \t")


def score(path: Path) -> Score:
    """Audit ``path`` with no derivation and compare its statements with the labels."""
    from symseq.audit.arithmetic import audit_arithmetic
    from symseq.read.document import read

    labels = load_labels(path)
    rep = audit_arithmetic(read(path))
    s = Score(path.name, labels)
    free = list(labels)
    for st in rep.statements:
        result = _norm(st.links[-1].right)
        hit = next((lab for lab in free if lab.line == st.line and _norm(lab.result) == result), None)
        if st.status == "wrong" and (hit is None or hit.verdict != "wrong"):
            s.false_errata.append(st)
        if hit is None:
            s.unlabelled.append(st)
            continue
        free.remove(hit)
        s.decided.append((hit, st.status))
        if st.status == hit.verdict:
            s.right += 1
        else:
            s.wrong_verdicts.append((hit, st.status))
            if st.status == "ok":
                s.false_all_clear.append((hit, st.status))
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every labelled statement with its outcome")
    args = ap.parse_args(argv)
    paths = files()
    if not any(p.parent == SEEDS for p in paths):
        print(f"note: no seed handouts at {SEEDS} (set SYMSEQ_SEEDS); the worked examples only", file=sys.stderr)
    total = Score("all", [])
    print(f"{'handout':36} {'labelled':>8} {'decided':>8} {'right':>6} {'false errata':>13} {'unlabelled':>10}")
    for p in paths:
        s = score(p)
        print(f"{s.name:36} {len(s.labels):8} {len(s.decided):8} {s.right:6} {len(s.false_errata):13} "
              f"{len(s.unlabelled):10}")
        if args.list:
            for lab in s.labels:
                got = next((st for lb, st in s.decided if lb is lab), "not decided")
                print(f"    {lab.line:5} {lab.verdict:6} {got:12} {lab.text}")
            for st in s.unlabelled:
                print(f"    {st.line:5} unlabelled {st.status:6} {st.text}")
        total.labels += s.labels
        total.decided += s.decided
        total.right += s.right
        total.false_errata += s.false_errata
        total.unlabelled += s.unlabelled
    n, d = len(total.labels), len(total.decided)
    print(f"{'total':36} {n:8} {d:8} {total.right:6} {len(total.false_errata):13} {len(total.unlabelled):10}")
    print(f"decided {d} of {n} labelled statements ({100 * d / n:.1f}%), {total.right} with the label's verdict, "
          f"{len(total.false_errata)} false errata")
    return 0 if not total.false_errata and total.right == d else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
