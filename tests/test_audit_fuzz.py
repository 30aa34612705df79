"""Random and hostile handout text: ``symseq audit`` (the Python API and the command line, in-process) ends with a
report or one of the project's errors, never a traceback, a hang or a crash of the terminal output.

Hypothesis's ``deadline`` bounds each example (a hang fails the test); the whole module runs in seconds.
"""

import io
import json
import random
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from symseq.audit import audit, parse
from symseq.present.audit import render
from symseq.authoring import bundled
from symseq.cli import main
from symseq.errors import SymseqError

HOSTILE = [
    "1e99999999", "-0.6e-99999999", "10^{99999999}", "1" * 1200, "[/x]", "[bold]", "[/]", "[link=x]",
    "[red on blue]", "\\[", "\\]", "\\(", "\\)", "$$", "$", "\\frac{", "\\frac{1}{", "\\sqrt{", "\\begin{bmatrix}",
    "\\end{bmatrix}", "&", "\\\\", "^{", "_{", "}", "{", "(", ")", "[", "]", "\x00", "\x1b[31m", "\x07", "\r", "\x0b",
    "\u2028", "\ufeff", "−", "√", "×", "%", "\\%", "|", "\t", "# ", "**", "```", "```text", "Table 1:", "Figure 2.",
    "§4 The forward pass by hand", "4. The forward pass by hand", "0.330238", "0.792412", "0.232674", "(0,4)",
    "[0.8,0.4]", "4×6", "1/4", "\\tfrac12", "w = ", "d_k = 4", "\\approx", "-", "+", ".", ",", "http://a1.b/2",
    "x_(", "W2", "nn-llm-2", "In [1]:", "import torch", "\n", "\n\n", "1e-225", "5e-324", "1.7976931348623157e+308",
    "0.8463", "-2.5e-100",
]
# one line each, of 20,000 characters or more (brackets and commands were scanned in quadratic time: 48 s for the
# first; a line of tabs or spaces met regular expressions that backtrack), lines of many numbers, and many headings
# (each compared with each section title, normalised every time)
LONG = ["(" * 20000, "[" * 20000, "\\frac{" * 4000, "a_(" * 7000, "^{a" * 7000, "\\begin{bmatrix}" * 1500,
        "x^{a+1}" * 300, "\\[1" * 300, "http://a1 " * 300, "a-1" * 300, "0.5 " * 300, "Table 1: x\n" + "\t" * 40000,
        "import x\n" + "a" + " " * 80000 + "b", "# a\n\n" * 80000]

text_strategy = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(HOSTILE), max_size=40).map("".join),
    st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)), max_size=30).map(" ".join),
    # numbers as Python prints floats, tiny and huge exponents included, between words
    st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False).map(repr), st.sampled_from(HOSTILE)),
             max_size=30).map(" ".join),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
    st.tuples(st.sampled_from(HOSTILE), st.integers(1, 2000)).map(lambda p: p[0] * p[1]),
)

BOUNDED = settings(max_examples=40, deadline=timedelta(seconds=15), database=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def week08():
    (d,) = [d for d in bundled() if d.name == "week08-decoder"]
    audit(parse("", path="warm.txt"), [d])  # its claims are decided once, outside the examples' deadline
    return d


@pytest.mark.parametrize("line", LONG, ids=[repr(t[:12]) for t in LONG])
def test_long_lines_of_brackets_and_commands_are_audited(week08, line):
    @settings(BOUNDED, max_examples=1)
    @given(text=st.just(line))
    def run(text):
        _audit_and_render(text, week08)

    run()


@pytest.mark.parametrize("examples", [10, pytest.param(40, marks=pytest.mark.slow)])
def test_hostile_text(week08, examples):
    @settings(BOUNDED, max_examples=examples)
    @given(text=text_strategy, fmt=st.sampled_from(["text", "markdown", "latex"]))
    @example(text="Week 8\n\nx = 1e99999999 here\n", fmt="text")
    @example(text="the value [/x] is 0.4444\n", fmt="markdown")
    # a printed 1e-225 has 225 decimals: rendering a value like it overflowed the decimal context (an internal error)
    @example(text="Step 147: the value is 0.8463 and then 785 plus 1e-225 (x_147 = 0.815)\n", fmt="markdown")
    def run(text, fmt):
        _audit_and_render(text, week08, fmt)

    run()


def _audit_and_render(text, d, fmt="text"):
    """Audit ``text`` and render the report: only the project's errors may come out."""
    try:
        rep = audit(parse(text, path="handout.txt", fmt=fmt), [d])
    except SymseqError:
        return
    out = Console(file=io.StringIO(), width=100, no_color=True)
    render(rep, out)
    json.dumps(rep.as_json())
    assert rep.failed or rep.counts.quantity  # a text without anything checked never passes


def test_the_command_line_on_hostile_text(week08, capsys):
    with tempfile.TemporaryDirectory() as tmp:
        handout, report = Path(tmp) / "handout.txt", Path(tmp) / "report.json"

        @BOUNDED
        @given(text=text_strategy)
        @example(text="")
        @example(text="x [/x] 2 and [bold]0.5[/bold]\n")
        def run(text):
            handout.write_text(text, encoding="utf-8")
            code = main(["--no-color", "audit", str(handout), "-d", "week08-decoder", "--json", str(report)])
            captured = capsys.readouterr()
            assert code in (1, 2), captured.err  # nothing here is the Week 8 handout: it never passes
            assert "Traceback" not in captured.err + captured.out
            if code == 1:
                assert json.loads(report.read_text(encoding="utf-8"))["failed"]

        run()


def test_the_audits_work_grows_linearly_with_the_text(week08):
    """Each unchecked number costs the audit a bounded amount of work (counted as Python calls, not timed):
    before, every claim recomputed where each input may stand for every token, about 40,000 calls per number
    (a 9 kB file of unchecked numbers took 75 s); now about 2,000."""

    def calls(n):
        r = random.Random(n)
        text = "\n".join(" ".join(f"{r.random():.{r.randint(1, 3)}f}" for _ in range(5)) for _ in range(n // 5))
        doc = parse(text, path="numbers.txt")
        count = [0]

        def profile(frame, event, arg):
            count[0] += 1

        sys.setprofile(profile)
        try:
            audit(doc, [week08])
        finally:
            sys.setprofile(None)
        return count[0]

    assert (calls(400) - calls(200)) / 200 < 10_000
