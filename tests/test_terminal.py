"""The terminal renderer at any width: no number, word or LaTeX command is split across lines; a value too long for
its column is shortened to its leading digits and an ellipsis (the full value is in ``verify --json``); the
progress display appears at once on a terminal and never elsewhere."""

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from rich.text import Text

from symseq.cli import main
from symseq.present.terminal import ELLIPSIS, Fit, ProgressDisplay, fit_lines, shorten_number

# a representative set: attention with LaTeX arrays as printed (handout 11), scores and weights (week 7), the decoder
# computed by hand (week 8); together they print every kind of cell: shapes, formulas, vectors, matrices, properties
VERIFIED = ["handout11-self-attention", "week07-attention", "week08-decoder"]
SHOWN = ["week07-attention", "week08-decoder"]


def _joins(x: str, y: str) -> bool:
    """Whether a line that ends with ``x`` and goes on with ``y`` cuts one token: a word or a number (letters, digits
    and a decimal point), a LaTeX command (``\\sq|rt``), a sub- or superscript, or a minus from its number."""
    if x.isalnum() and y.isalnum():
        return True
    if (x.isdigit() and y == ".") or (x == "." and y.isdigit()):
        return True
    return (x == "\\" and y.isalpha()) or x in "_^" or y in "_^" or (x in "-−" and y.isdigit())


def split_tokens(narrow: str, wide: str) -> list[str]:
    """The pieces of ``narrow`` (a rendering at a small width) that are part of a token of ``wide`` (the same
    rendering where nothing wraps) cut inside a number, word or command: each is a line that ends inside a token
    which continues on the next line. A piece shortened with an ellipsis ends visibly and is not a cut."""
    tokens = set(wide.split())
    blob = "\0" + "\0".join(sorted(tokens)) + "\0"
    bad = []
    for chunk in sorted(set(narrow.split())):
        if chunk in tokens or ELLIPSIS in chunk:
            continue
        i, found, clean = blob.find(chunk), False, False
        while i != -1 and not clean:
            before, after = blob[i - 1], blob[i + len(chunk)]
            found = True
            clean = (before == "\0" or not _joins(before, chunk[0])) and (after == "\0" or not _joins(chunk[-1], after))
            i = blob.find(chunk, i + 1)
        if found and not clean:
            bad.append(chunk)
    return bad


def _render(args, monkeypatch, capsys, columns: int) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["--no-color", *args]) == 0
    return capsys.readouterr().out


def test_the_check_finds_a_number_split_as_rich_folds_it():
    # what verify printed at 80 columns before (a folding column): "(0.693147180" then "56, 0, 0)"
    t = Table(box=None)
    t.add_column("value", overflow="fold", width=12)
    t.add_row(Text("(0.69314718056, 0, 0) and 1Content-dependent"))
    narrow, wide = io.StringIO(), io.StringIO()
    Console(file=narrow, width=20).print(t)
    Console(file=wide, width=200).print(Text("(0.69314718056, 0, 0) and 1Content-dependent"))
    assert {"(0.693147180", "56,", "1Content-dep", "endent"} <= set(split_tokens(narrow.getvalue(), wide.getvalue()))
    t.columns[0]._cells = [Fit("(0.69314718056, 0, 0) and 1Content-dependent")]
    narrow = io.StringIO()
    Console(file=narrow, width=20).print(t)
    assert split_tokens(narrow.getvalue(), wide.getvalue()) == []
    assert "(0.6931471…," in narrow.getvalue() and "1Content-" in narrow.getvalue()


def test_verify_at_80_columns_splits_no_number_or_word(monkeypatch, capsys):
    wide = _render(["verify", "--all", *VERIFIED], monkeypatch, capsys, 1000)
    narrow = _render(["verify", "--all", *VERIFIED], monkeypatch, capsys, 80)
    findings = ("NOTE ", "MISMATCH ", "ERROR ")  # one line each however long, for a log (a terminal wraps them)
    assert all(len(x) <= 80 for x in narrow.splitlines() if not x.startswith(findings) and " claims in " not in x)
    assert split_tokens(narrow, wide) == []
    # below 110 columns a claims table has no "exact" column, so p(B|AB)'s value fits whole
    assert "0.792411504249" in wide and " 0.792411504249 " in narrow
    assert re.search(r" exact +value ", wide) and not re.search(r" exact +value ", narrow)


def test_show_at_80_columns_splits_no_number_and_cuts_no_value(monkeypatch, capsys):
    for name in SHOWN:
        wide = _render(["show", name], monkeypatch, capsys, 1000)
        narrow = _render(["show", name], monkeypatch, capsys, 80)
        assert max(map(len, narrow.splitlines())) <= 80
        assert split_tokens(narrow, wide) == [], name
    assert "0.707107" in narrow and "0.7…" not in narrow  # S = QKᵀ/√2 of week 8: 1/√2 ≈ 0.707107, whole


def test_a_decimal_is_shortened_to_its_leading_digits():
    assert shorten_number("0.792411504249", 11) == "0.79241150…"
    assert shorten_number("−0.0625", 6) == "−0.06…"
    assert shorten_number("−1.52345e−7", 8) == "−1.5…e−7"
    assert shorten_number("0.130000", 4) == "0.13"  # only zeros dropped: the same number, no ellipsis
    assert shorten_number("2.50", 3) == "2.5"
    assert shorten_number("123456.5", 6) is None  # no digit of the integer part is ever dropped
    assert shorten_number("0.5", 3) == "0.5"


@settings(max_examples=300, deadline=None)
@given(st.decimals(min_value=-10**6, max_value=10**6, allow_nan=False, places=12), st.integers(1, 20))
def test_a_shortened_decimal_keeps_true_leading_digits(x, width):
    text = format(x, "f").replace("-", "−")
    short = shorten_number(text, width)
    if short is None:
        assert len(text.split(".")[0]) + 3 > width
        return
    assert len(short) <= width
    if short.endswith(ELLIPSIS):
        assert text.startswith(short[:-1])
    else:
        assert text.startswith(short) and set(text[len(short):]) <= {"0", "."}


WORDS = st.sampled_from(["0.792411504249", "−0.125", "(0.5,", "1/(1 + e^{1/√2})", r"\frac{1}{1+e^{1/\sqrt{2}}}",
                         "softmax_rows(S_causal)", "1Content-dependent", "k.view(…).transpose(1,", "2)",
                         r"\begin{array}{cc}1/4&-1/8\\-1/8&3/16\end{array}", "the", "weights", "d_k", "≈"])


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=12), st.integers(4, 40))
def test_fit_never_splits_a_token_and_stays_in_width(words, width):
    text = " ".join(words)
    lines = fit_lines(text, width)
    assert all(len(line) <= width for line in lines)
    assert split_tokens("\n".join(lines), text) == []
    commands = set(re.findall(r"\\[A-Za-z]+", text))
    for line in lines:  # a LaTeX command is whole or shortened (with an ellipsis), never cut
        assert set(re.findall(r"\\[A-Za-z]+(?![A-Za-z…])", line)) <= commands


def test_fit_keeps_the_styles_of_a_rich_text():
    buf = io.StringIO()
    Console(file=buf, width=14, force_terminal=True, color_system="standard").print(
        Fit(Text.assemble(("W_Q", "bold"), " = 0.69314718056")))
    lines = Text.from_ansi(buf.getvalue()).plain.splitlines()
    assert lines == ["W_Q =", "0.69314718056"]
    assert "\x1b[1m" in buf.getvalue()  # bold kept


def test_progress_appears_at_once_on_a_terminal_naming_the_derivation():
    from symseq.authoring import bundled

    (d,) = [x for x in bundled() if x.name == "week08-decoder"]
    term = io.StringIO()
    with ProgressDisplay(Console(file=term, force_terminal=True, width=100)) as bar:
        bar.tick("building", 0, 1, "week08-decoder")
        bar.progress.refresh()
        shown = term.getvalue()
    assert "building week08-decoder" in shown  # before any work is done, not after a delay
    piped = io.StringIO()
    with ProgressDisplay(Console(file=piped, force_terminal=False, width=100)) as bar:
        bar.tick("building", 0, 1, d.name)
    assert piped.getvalue() == ""


@pytest.mark.parametrize("width", [80, 200])
def test_a_section_that_did_not_build_shows_error_in_the_status_column(width):
    from symseq import Derivation
    from symseq.present.terminal import verify_table
    from symseq.verify.report import verify

    d = Derivation("broken-page", source="p.md", title="P")

    @d.section("Broken")
    def broken(s):
        raise ValueError("boom")

    verify([d])
    table = verify_table(d, width=width)
    assert [c._cells[1] for c in table.columns][-1].plain == "error"  # the status column, not the value column


def test_audit_errata_at_80_and_60_columns_split_no_number(monkeypatch, capsys, tmp_path):
    from pathlib import Path

    page = Path(__file__).resolve().parent / "data" / "examples" / "rnn-forward-tanh-notebook.md"

    def render(columns: int) -> str:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.chdir(tmp_path)  # no ./derivations: the page's own arithmetic
        assert main(["--no-color", "audit", str(page), "--all", "--no-local"]) == 1  # two wrong tanh values
        return capsys.readouterr().out

    wide = render(1000)
    at80, at60 = render(80), render(60)
    for narrow in (at80, at60):
        # no number is cut (the coverage table's headings may still wrap inside a word at these widths)
        assert [p for p in split_tokens(narrow, wide) if any(ch.isdigit() for ch in p)] == []
        assert all(len(x.rstrip()) <= 80 for x in narrow.splitlines() if "━" in x)  # no table wider than that
    assert "0.809817989965" in at80 and "0.708666534436" in at80
    # at 60 columns the errata's values keep their leading digits (the whole value is in --json), never cut
    assert "0.8098179…" in at60 and "0.7086665…" in at60
    assert all(len(x.rstrip()) <= 60 for x in at60.splitlines() if "━" in x)
