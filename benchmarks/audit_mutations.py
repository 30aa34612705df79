"""How many edited numbers the audit catches: mutation testing over the seed handouts and the worked examples.

Each handout is audited unedited first: a seed must pass (no errata, nothing missing); a worked example with
slips of its own is mutated all the same, and only what an edit adds to its errata counts.
Then every covered quantity token is edited one at a time in the ways of
:mod:`symseq.audit.mutate` (last digit, middle digit, sign, two entries swapped,
the number deleted), and the edited text is audited again. A mutation counts
as caught when the audit fails (exit status 1), names the edited line (an
erratum there, or a claim missing from the text expected there), and, for a
digit or sign edit, gives the number as it was printed as the correct rounding.
An edit not caught that leaves a true statement (``\\cos 3`` as ``\\cos -3``; see
:func:`symseq.audit.mutate.equivalent`; a comparison word flipped in a question) is *not counted*: it has its
column and is left out of the percentage. The held-out kinds (``--kinds``: ``repeat``, and ``shape``,
``integer``, ``word``, ``copy``, which edit the page's other mathematics) are caught when the audit fails and
names the edited line. Each row gives the edits made, caught, missed and not counted; a few misses of each
handout and kind are listed below the table (``--examples N``, every one with ``--misses``).

    python benchmarks/audit_mutations.py                  # every mutation (minutes per seed)
    python benchmarks/audit_mutations.py --sample 40      # at most 40 of each kind per handout
    python benchmarks/audit_mutations.py --misses         # also list what was not caught
    python benchmarks/audit_mutations.py --kinds repeat   # a held-out kind: a line repeated with a changed number
    python benchmarks/audit_mutations.py --kinds shape,integer,word,copy --sample 25 --only 00
                                                          # the held-out edits of the page's other mathematics
    python benchmarks/audit_mutations.py -j 2             # in two processes
    python benchmarks/audit_mutations.py --only 004       # one handout

The seeds are read from ../shared/seeds beside the repository or $SYMSEQ_SEEDS;
the worked examples from tests/data/examples (each with its derivation in
tests/data/examples/derivations).
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEDS = Path(os.environ.get("SYMSEQ_SEEDS") or ROOT.parent / "shared" / "seeds")
EXAMPLES = ROOT / "tests" / "data" / "examples"
SEED_DERIVATIONS = {"000_30e9e4099f2cd2dc.txt": ["week08-decoder"],
                    "001_d42a515eb3cd140c.txt": ["handout11-self-attention"],
                    "003_b76f00753924d0c1.txt": ["week07-attention"],
                    "004_daeab95066cb0286.txt": ["week06-rnn", "week06-encoder"]}


def handouts() -> list[tuple[Path, list]]:
    """(path, derivations) for each seed handout and each worked example."""
    from symseq.authoring import bundled, discover

    out = []
    ds = bundled()
    for name, names in SEED_DERIVATIONS.items():
        if (SEEDS / name).is_file():
            out.append((SEEDS / name, [d for d in ds if d.name in names]))
    if (EXAMPLES / "derivations").is_dir():
        found = discover([EXAMPLES / "derivations"], include_bundled=False)
        from symseq.read.formats import SUFFIXES

        for f in sorted(p for p in EXAMPLES.iterdir() if p.suffix.lower() in SUFFIXES):
            mine = [d for d in found if d.source == f.name]
            if mine:
                out.append((f, mine))
    return out


def _judge(job):
    path, names, m, clean = job
    from symseq.audit import audit_document, read
    from symseq.audit.mutate import judge

    ds = _derivations_by_name(path, names)
    doc = read(path)
    if clean is None:  # in a worker process: the clean audit is made there once (a report does not pickle)
        key = (str(path), tuple(names))
        if key not in _CLEAN:
            _CLEAN[key] = audit_document(doc, ds)
        clean = _CLEAN[key]
    return judge(m, doc, ds, clean=clean)


_CACHE: dict = {}
_CLEAN: dict = {}


def _derivations_by_name(path: Path, names: list[str]) -> list:
    key = (str(path), tuple(names))
    if key not in _CACHE:
        _CACHE[key] = [d for p, ds in handouts() if p == path for d in ds if d.name in names]
    return _CACHE[key]


def run(sample: int | None, jobs: int, seed: int, misses: bool, out=sys.stdout, only: str = "",
        kinds: tuple = (), examples: int = 3) -> int:
    from symseq.audit import audit_document, read
    from symseq.audit.mutate import HELD_OUT, KINDS, plan

    kinds = kinds or KINDS
    unknown = [k for k in kinds if k not in KINDS + HELD_OUT]
    if unknown:
        raise SystemExit(f"unknown kind(s) {', '.join(unknown)}: the kinds are {', '.join(KINDS + HELD_OUT)}")
    from symseq.audit.mutate import sample as draw

    bad = 0
    rows, listed = [], []
    for path, ds in handouts():
        if not path.name.startswith(only):
            continue
        doc = read(path)
        clean = audit_document(doc, ds)
        seeded = path.parent == SEEDS
        if clean.failed:
            print(f"{path.name}: unedited, the audit fails ({'; '.join(clean.failures())})", file=out)
            if seeded:  # a seed handout has no errata: its clean audit must pass
                bad += 1
                continue
        muts = plan(clean, doc, kinds=kinds, seed=seed)
        if sample:
            muts = draw(muts, sample, seed)
        if jobs > 1:
            with ProcessPoolExecutor(jobs) as ex:
                verdicts = list(ex.map(_judge, [(path, [d.name for d in ds], m, None) for m in muts], chunksize=4))
        else:
            verdicts = [_judge((path, [d.name for d in ds], m, clean)) for m in muts]
        for kind in kinds:
            vs = [v for v in verdicts if v.mutation.kind == kind]
            if not vs:
                rows.append((path.name, kind, 0, 0, 0, 0))
                continue
            caught = sum(v.caught for v in vs)
            equiv = sum(v.equivalent for v in vs)
            rows.append((path.name, kind, len(vs), equiv, caught, sum(v.failed for v in vs)))
            if caught < len(vs) - equiv:
                bad += 1
            missed = [v for v in vs if not v.caught and not v.equivalent]
            shown = missed if misses else missed[:examples]
            listed += [f"  MISSED {path.name} {_show(v, doc)}" for v in shown]
            if misses:
                listed += [f"  NOT COUNTED {path.name} {_show(v, doc)} ({v.reason})" for v in vs if v.equivalent]
    print(f"{'handout':34} {'kind':8} {'edits':>6} {'caught':>7} {'missed':>7} {'not counted':>12} {'%':>7} "
          f"{'exit 1':>7}", file=out)
    for name, kind, n, equiv, caught, failed in rows:
        pct = f"{100 * caught / (n - equiv):6.1f}%" if n > equiv else "     —"
        print(f"{name:34} {kind:8} {n:6d} {caught:7d} {n - equiv - caught:7d} {equiv:12d} {pct:>7} {failed:7d}",
              file=out)
    if listed:
        print("\nnot caught (line:column kind: before -> after [what was edited] | what the audit said):", file=out)
        print("\n".join(listed), file=out)
    return 1 if bad else 0


def _show(v, doc) -> str:
    """One mutation not caught: where, the edit, what it edited, and what the audit said of the edited text."""
    m = v.mutation
    line = doc.lines[m.line - 1]
    around = line[max(0, m.start - 30):m.start] + "⟦" + m.before + "⟧" + line[m.end:m.end + 30]
    said = v.said or "passed"
    return f"{m} [{m.note}] in {around!r}: failed={v.failed} at_line={v.at_line} | {said}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, metavar="N", help="at most N mutations of each kind per handout")
    p.add_argument("--seed", type=int, default=0, help="the random seed of --sample")
    p.add_argument("-j", "--jobs", type=int, default=1, help="processes")
    p.add_argument("--misses", action="store_true", help="list the mutations that were not caught")
    p.add_argument("--only", metavar="PREFIX", default="", help="only the handouts whose file name starts so")
    p.add_argument("--kinds", default="", help="comma-separated kinds (default: last,middle,sign,swap,delete; "
                                                "held out: repeat, shape, integer, word, copy)")
    p.add_argument("--examples", type=int, default=3, metavar="N",
                   help="misses listed per handout and kind (default 3; --misses lists all)")
    a = p.parse_args(argv)
    kinds = tuple(k.strip() for k in a.kinds.split(",") if k.strip())
    return run(a.sample, a.jobs, a.seed, a.misses, only=a.only, kinds=kinds, examples=a.examples)


if __name__ == "__main__":
    sys.exit(main())
