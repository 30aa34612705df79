"""The author's loop in CPU seconds: start-up, a second ``symseq verify``, and an audit of a small page with no
derivation, each a fresh process as the author runs it.

    python benchmarks/startup.py            # five runs of each command, the median
    python benchmarks/startup.py --runs 9

Each figure is the CPU time (user + system) of the child process, read from ``getrusage(RUSAGE_CHILDREN)``
around it, so that another process on a shared machine does not count; the median of ``--runs`` runs is
compared with its goal. The cache of decided derivations lives in a fresh temporary folder
(``SYMSEQ_CACHE_DIR``): "first verify" fills it, "second verify" reads it, and the second run's report and
JSON are compared with the first's, byte for byte. Commands run in an empty folder (no ``./derivations``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "pages" / "tanh-step-36.md"  # 36 lines: two tanh steps, a loss, a softmax table

# (label, command after `symseq`, goal in CPU seconds or None)
FIGURES = [
    ("symseq --version", ["--version"], 0.25),
    ("symseq --help", ["--help"], None),
    ("symseq list", ["list"], None),
    ("audit of a 36-line page, no derivation", ["audit", str(PAGE)], 0.5),
    ("second symseq verify (nothing changed)", ["verify", "--json", "{json}", "--force"], 3.0),
]


def cpu_seconds(args: list[str], env: dict, cwd: str) -> tuple[float, subprocess.CompletedProcess]:
    """(user + system CPU seconds of one run of ``symseq args``, its completed process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "symseq.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="runs of each command (default 5); the median is reported")
    args = p.parse_args(argv)
    load = "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    print(f"processor: {processor()}; {os.cpu_count()} CPUs; load at start {load}")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SYMSEQ_CACHE_DIR": str(Path(tmp) / "cache"), "COLUMNS": "80", "NO_COLOR": "1"}
        cwd = str(Path(tmp) / "work")
        os.mkdir(cwd)
        first_json, second_json = str(Path(tmp) / "first.json"), str(Path(tmp) / "second.json")
        first, run = cpu_seconds(["verify", "--json", first_json], env, cwd)
        if run.returncode != 0:
            print(run.stdout + run.stderr)
            return 1
        print(f"first symseq verify (fills the cache): {first:.2f} s CPU")
        rows, met = [], True
        for label, command, goal in FIGURES:
            command = [c.replace("{json}", second_json) for c in command]
            times = []
            for _ in range(args.runs):
                t, done = cpu_seconds(command, env, cwd)
                times.append(t)
            if label.startswith("second"):
                same = Path(first_json).read_bytes() == Path(second_json).read_bytes() and done.stdout == run.stdout
                label += "" if same else " (REPORT DIFFERS)"
                met &= same
            median = statistics.median(times)
            ok = goal is None or median <= goal
            met &= ok
            rows.append((label, median, min(times), max(times), goal, ok, done.returncode))
        width = max(len(r[0]) for r in rows)
        print(f"{'figure':<{width}}  median    min    max   goal  met   exit")
        for label, median, lo, hi, goal, ok, code in rows:
            goal_text = f"{goal:5.2f}" if goal is not None else "    -"
            verdict = "-" if goal is None else ("yes" if ok else "NO")
            print(f"{label:<{width}}  {median:6.2f} {lo:6.2f} {hi:6.2f}  {goal_text}  {verdict:<4} {code}")
    load = "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    print(f"CPU seconds (user + system) of each fresh process, median of {args.runs}; load at end {load}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
