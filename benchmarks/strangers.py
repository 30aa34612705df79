"""Strangers' pages: public worked examples no test was tuned to, audited with no derivation, against labels.

    python benchmarks/strangers.py            # a row per page and the totals
    python benchmarks/strangers.py --list     # and every erratum and every labelled wrong statement

Each page in tests/data/strangers is a rendition of a public worked example (its first line names the source),
labelled statement by statement in tests/data/strangers/labels/<file>.txt by a reader who never saw the checker,
every number recomputed in plain mpmath (the labels' last column): ``ok``, ``wrong`` (a root erratum: wrong even
allowing the rounding of its printed operands), ``drift`` (within that rounding), ``propagated`` (right from an
earlier wrong number). ``symseq audit FILE`` with no derivation runs on each page, and the four figures of the
zero-code audit are counted:

- false errata: errata the audit reports at a line with no ``wrong`` or ``propagated`` label (goal 0);
- root errata found: ``wrong`` labels with an erratum at their own line (goal at least 90%);
- pages with a root erratum that exit 0 (goal 0);
- statements checked: labelled statements the audit decides (a statement of its arithmetic ends on that line;
  goal at least half).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRANGERS = ROOT / "tests" / "data" / "strangers"


def pages() -> list[Path]:
    return sorted(p for p in STRANGERS.iterdir() if p.is_file() and (STRANGERS / "labels" / (p.name + ".txt")).is_file())


def score(path: Path) -> dict:
    """The audit of ``path`` with no derivation, compared with its labels."""
    from arithmetic_coverage import load_labels

    from symseq.audit.arithmetic import audit_page
    from symseq.read.document import read

    labels = load_labels(path, STRANGERS / "labels")
    rep = audit_page(read(path))
    bad = {lab.line for lab in labels if lab.verdict in ("wrong", "propagated")}
    roots = [lab for lab in labels if lab.verdict == "wrong"]
    flagged = {e.line for e in rep.errata}
    decided = {st.line for st in rep.arithmetic.statements}
    return {
        "name": path.name, "labels": labels, "failed": rep.failed,
        "false": [e for e in rep.errata if e.line not in bad],
        "roots": roots, "found": [lab for lab in roots if lab.line in flagged],
        "checked": [lab for lab in labels if lab.line in decided],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print every erratum and every labelled wrong statement")
    args = ap.parse_args(argv)
    head = f"{'page':42} {'labelled':>8} {'checked':>8} {'roots':>6} {'found':>6} {'false errata':>13} {'exit':>5}"
    print(head)
    tot = {"labels": 0, "checked": 0, "roots": 0, "found": 0, "false": 0, "silent": 0}
    for p in pages():
        s = score(p)
        silent = bool(s["roots"]) and not s["failed"]
        print(f"{s['name']:42} {len(s['labels']):8} {len(s['checked']):8} {len(s['roots']):6} {len(s['found']):6} "
              f"{len(s['false']):13} {int(s['failed']):5}" + ("  a root erratum, exit 0" if silent else ""))
        if args.list:
            for e in s["false"]:
                print(f"    FALSE ERRATUM line {e.line}: {e.printed} ({e.fault})")
            for lab in s["roots"]:
                print(f"    {'found' if lab in s['found'] else 'MISSED'} line {lab.line}: {lab.result} — {lab.text}")
        for k in ("labels", "checked", "roots", "found", "false"):
            tot[k] += len(s[k])
        tot["silent"] += silent
    print(f"{'total':42} {tot['labels']:8} {tot['checked']:8} {tot['roots']:6} {tot['found']:6} {tot['false']:13}")
    n = max(tot["labels"], 1)
    print(f"false errata {tot['false']}; root errata found at their line {tot['found']} of {tot['roots']}; "
          f"pages with a root erratum that exit 0: {tot['silent']}; statements checked {tot['checked']} of "
          f"{tot['labels']} ({100 * tot['checked'] / n:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    raise SystemExit(main())
