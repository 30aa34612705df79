"""The ``symseq`` command: list, verify, show, and write LaTeX and figures of derivations.

    symseq list
    symseq verify [NAME ...] [--json FILE] [--output-format text|json|github|junit] [--force] [--mkdir] [--digits N]
                  [-j N] [--quiet | --failures | --all]
    symseq show NAME [SECTION]
    symseq latex NAME [-o FILE] [--standalone] [--force] [--mkdir] [--full]
    symseq figure NAME KIND [-o FILE] [--force] [--mkdir] [--dpi N]
    symseq audit FILE [FILE ...] [--derivation NAME ...] [--json OUT] [--output-format text|json|github|junit]
                 [--force] [--mkdir] [--quiet | --failures | --all]
    symseq new NAME
    symseq --version

Global options, before or after the command: --no-color, --traceback, and for the commands that load derivations
--path DIR (repeatable), --no-bundled, --no-local. ``verify`` and ``audit`` print their full report on a terminal and
only what failed, then the summary line, elsewhere (``symseq verify > log`` of a passing run writes one line);
--quiet prints the summary line alone. A progress display names the derivation being built, on standard error and
only when it is a terminal. ``--output-format`` of ``verify`` and ``audit`` prints, instead of the report, the JSON
document (``json``), one GitHub workflow annotation per finding (``github``) or a JUnit XML document (``junit``) on
standard output (:mod:`symseq.present.ci`).

A misspelt command, option, choice or derivation name is answered with the closest ones ("did you mean").

Exit status (:data:`EXIT_CODES`): 0 when everything checked holds; 1 when a claim or a number of the handout is
wrong (or missing from it, or the audit's coverage is below ``--fail-under``); 2 for bad usage or input (an
unknown name, a file that cannot be audited, an output path refused, a derivation module that does not load or a
section that does not build: its claims are not decided, whatever else the report holds, which it still prints
and writes); 3 when the environment fails (a file or
folder the system will not read or write, a missing package); 4 for an internal error (a bug in symseq, never
taken for a wrong claim). ``verify`` skips claims that need an optional package (reported, not failing). Errors
print one message, without a traceback (``--traceback`` shows it). A reader that closes the output early
(``symseq verify | head``) ends the output quietly; the status is still the verdict.

Every command imports the derivation modules of ``./derivations`` in the current folder (and of ``--path``),
which runs their Python code: run symseq only in folders whose derivations you trust, or pass ``--no-local``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

from .read.formats import FORMATS
from .collector import without_cycle_collection
from .errors import BackendUnavailable, FileSystemError, SymseqError

EXIT_CODES = {0: "every claim and number checked holds", 1: "a claim or a number of the handout is wrong",
              2: "bad usage or input (a derivation that does not load or build)",
              3: "an environment error (file system, missing package)",
              4: "an internal error of symseq (a bug: --traceback shows where)"}
OUTPUT_FORMATS = ("text", "json", "github", "junit")
TRUST = ("Every command imports the Python modules of ./derivations in the current folder (and of --path DIR), "
         "which runs their code: use symseq only where you trust those files, or pass --no-local to skip "
         "./derivations.")


def _check_digits(digits: int) -> None:
    """The digits of values shown: at least 1, at most the significant digits a claim's values carry."""
    from .numbers import VALUE_DIGITS

    if not 1 <= digits <= VALUE_DIGITS:
        raise SymseqError(f"--digits must be between 1 and {VALUE_DIGITS} (values carry {VALUE_DIGITS} significant "
                          f"digits; verify --json gives all of them); got --digits {digits}")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="symseq", description="Check the mathematics of sequence-model handouts.",
        epilog=_examples("list the derivations, check every claim, audit a page",
                         "symseq list", "symseq verify", "symseq verify week08-decoder --all",
                         "symseq audit page.md", "symseq COMMAND --help")
        + "\n\n" + _wrap(TRUST) + "\n\n" + _wrap("Exit status: " + "; ".join(f"{k} {v}" for k, v in
                                                                           EXIT_CODES.items()) + "."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_global_options(after=False), _derivation_options(after=False)])
    p.add_argument("--version", action=_Version, help="show symseq's version and exit")
    commands = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p.commands = commands

    def command(name, *, loads=True, examples=(), **kw):
        """A command's parser: the global options (and, when it loads derivations, theirs) after its name too, and
        its examples below the options in --help."""
        parents = [_global_options(after=True)] + ([_derivation_options(after=True)] if loads else [])
        return commands.add_parser(name, parents=parents, epilog=_examples(*examples) if examples else None,
                                   formatter_class=argparse.RawDescriptionHelpFormatter, **kw)

    def listing(sp):
        """--quiet, --failures and --all: how much of the report to print (default: all on a terminal, else
        failures and the summary)."""
        g = sp.add_mutually_exclusive_group()
        g.add_argument("-q", "--quiet", dest="output", action="store_const", const="quiet",
                       help="print the summary line only")
        g.add_argument("--failures", dest="output", action="store_const", const="failures",
                       help="print only what failed, then the summary (the default when the output is not a "
                            "terminal)")
        g.add_argument("--all", dest="output", action="store_const", const="all",
                       help="print the full report (the default on a terminal)")

    def output_format(sp):
        sp.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text", metavar="FORMAT",
                        help="text (the report, default), json (the JSON document), github (one GitHub workflow "
                             "annotation per finding, at its file and line) or junit (JUnit XML), on standard "
                             "output")

    command("list", help="list the derivations",
            examples=("the bundled derivations and those of ./derivations",
                      "symseq list",
                      "also those of another folder",
                      "symseq list --path ../my-notes/derivations"))

    v = command("verify", help="check every claim of the named derivations (default: all)",
                examples=("every derivation (bundled, and those of ./derivations)",
                          "symseq verify",
                          "one derivation, by its name or a unique start of it, with the full report",
                          "symseq verify week08 --all",
                          "a JSON record per claim, to a file",
                          "symseq verify --json claims.json",
                          "in a GitHub workflow: an annotation on the handout's line for each wrong claim",
                          "symseq verify --output-format github",
                          "JUnit XML for a CI service's test report",
                          "symseq verify --output-format junit > symseq-junit.xml"))
    v.add_argument("names", nargs="*", metavar="NAME")
    v.add_argument("--json", metavar="FILE", help="write one record per claim to FILE ('-' for stdout)")
    output_format(v)
    _output_options(v, "the --json FILE")
    v.add_argument("--digits", type=int, default=12, metavar="N",
                   help="significant digits of the values shown (default 12; JSON values carry 40)")
    v.add_argument("--dps", type=int, default=50, metavar="N", help="working precision in decimal digits (default 50)")
    v.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                   help="verify the derivations in N processes at once (default 1; the report is the same)")
    listing(v)

    s = command("show", help="show a derivation: its tables, paired rows, heatmaps, ledgers and claims",
                examples=("a whole derivation", "symseq show week08-decoder",
                          "one section, by the start of its title", "symseq show week08-decoder '§4'",
                          "the section that shows a table", "symseq show week06-encoder 'Table 13'"))
    s.add_argument("name", metavar="NAME")
    s.add_argument("section", nargs="?", metavar="SECTION", help="a section title or its start (e.g. '§4'), or a table or figure it shows (e.g. 'Table 13')")
    s.add_argument("--digits", type=int, default=6, metavar="N",
                   help="significant digits of ledger values (tables keep their own rounding; default 6)")

    lx = command("latex", help="write a derivation as LaTeX (a fragment, or a document with --standalone)",
                 examples=("a fragment on standard output", "symseq latex week08-decoder",
                           "a document that compiles with pdflatex",
                           "symseq latex week08-decoder --standalone -o week08.tex"))
    lx.add_argument("name", metavar="NAME")
    lx.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
    lx.add_argument("--standalone", action="store_true", help="a complete document that compiles with pdflatex")
    _output_options(lx, "FILE")
    lx.add_argument("--section", metavar="SECTION", help="only the sections whose title starts with or contains this (or that show this table or figure, e.g. 'Table 13')")
    lx.add_argument("--no-claims", action="store_true", help="leave out the tables of claims")
    lx.add_argument("--full", action="store_true",
                    help="every section's ledgers in full and one row per claim (default: each ledger once, "
                         "claims as compact tables)")
    lx.add_argument("--digits", type=int, default=6, metavar="N", help="significant digits of ledger values")

    fg = command("figure", help="draw a figure of a derivation as PNG, PDF or SVG (needs symseq[figures])",
                 examples=("a heatmap, by its label", "symseq figure week06-encoder 'Figure 4' -o fig4.png",
                           "several heads side by side, on one colour scale", "symseq figure week06-encoder heads",
                           "gradient paths, as a PDF", "symseq figure week06-rnn gradient-paths -o paths.pdf"))
    fg.add_argument("name", metavar="NAME")
    fg.add_argument("kind", metavar="KIND",
                    help="'heatmap', 'heads' (heatmaps side by side on one scale), 'gradient-paths', "
                         "or the label of one of the derivation's heatmaps")
    fg.add_argument("-o", "--output", metavar="FILE",
                    help="the file; its extension (.png, .pdf, .svg) sets the format (default NAME-KIND.png)")
    _output_options(fg, "FILE")
    fg.add_argument("--label", action="append", default=[], metavar="LABEL",
                    help="the heatmap(s) to draw, by label or its start (repeatable)")
    fg.add_argument("--section", metavar="SECTION", help="draw the heatmaps of this section")
    fg.add_argument("--dpi", type=_dpi, metavar="N",
                    help="resolution of a PNG in dots per inch, 10 to 1200 (default 100; 300 for print)")

    nw = command("new", loads=False, help="write a starter derivation into ./derivations/NAME.py (and a "
                                          "conftest.py for pytest, if there is none); never overwrites a file",
                 examples=("a starter for the page my-example.md, then check it",
                           "symseq new my-example", "symseq verify my-example", "symseq audit my-example.md"))
    nw.add_argument("name", metavar="NAME", help="the derivation's name, such as my-example (the module is "
                                                 "derivations/my_example.py)")

    au = command("audit", help="find every number in a handout's text and say which are checked, wrong, "
                                   "or unchecked",
                 examples=("a page's own arithmetic, with no derivation (or against the derivations whose source "
                           "it is)",
                           "symseq audit page.md",
                           "against a derivation named on the command line",
                           "symseq audit copy_of_000.txt --derivation week08-decoder",
                           "several pages (a pre-commit hook passes the files it checks)",
                           "symseq audit notes/*.md",
                           "in a GitHub workflow: an annotation on the line of each wrong number",
                           "symseq audit page.md --output-format github",
                           "every token and its class as JSON, failing below 90% coverage",
                           "symseq audit page.md --json audit.json --fail-under 90"))
    au.add_argument("files", nargs="+", metavar="FILE",
                    help="the handout: plain text (.txt), Markdown (.md), LaTeX (.tex), a Jupyter notebook "
                         "(.ipynb) or a saved web page (.html, .htm); several are audited one after the other")
    au.add_argument("--derivation", "-d", action="append", default=[], metavar="NAME",
                    help="a derivation to audit against (repeatable; default: those whose source is FILE's name)")
    au.add_argument("--json", metavar="OUT", help="write every token and its classification to OUT ('-' for "
                                                  "stdout; one FILE only)")
    output_format(au)
    _output_options(au, "OUT")
    au.add_argument("--format", choices=FORMATS,
                    help="the file's format (default: by its suffix; a suffix not listed above is text)")
    au.add_argument("--fail-under", type=_percent, metavar="PCT",
                    help="also exit 1 when the coverage of quantity tokens is below PCT percent")
    listing(au)
    return p


def _examples(*lines: str) -> str:
    """The "examples:" block of a command's --help: comments (what) and commands in turn, as given; a line that
    starts with "symseq" is a command, any other a comment above the commands after it."""
    out = ["examples:"]
    for line in lines:
        out.append(f"  {line}" if line.startswith("symseq") else f"  # {line}")
    return "\n".join(out)


def _wrap(text: str) -> str:
    """A paragraph of --help wrapped to 88 columns (the help keeps the epilog's own line breaks)."""
    return textwrap.fill(text, 88)


def suggest(word: str, choices) -> list[str]:
    """The choices closest to a misspelt ``word`` (:func:`symseq.authoring.discovery.closest`)."""
    from .authoring.discovery import closest

    return closest(word, choices)


def did_you_mean(word: str, choices) -> str:
    """``"; did you mean 'verify'?"`` for a misspelt ``word`` (several: ``'a' or 'b'``), or "" when none is close."""
    close = suggest(word, choices)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


class _Parser(argparse.ArgumentParser):
    """argparse, answering a misspelt command, choice or option with the closest ones: ``symseq verfy`` says
    "invalid choice: 'verfy'; did you mean 'verify'?", and ``symseq verify --jsn x`` "unrecognized arguments: --jsn
    (did you mean --json?)". The commands' parsers are of this class too (argparse makes them so)."""

    commands = None  # the sub-parsers action of the top-level parser

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{did_you_mean(value, action.choices)} "
                                                 f"(choose from {choices})")

    def parse_args(self, args=None, namespace=None):
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self
            if self.commands is not None and getattr(ns, "command", None) in self.commands.choices:
                parser = self.commands.choices[ns.command]
            parser.error("unrecognized arguments: " + " ".join(self._unknown(parser, x) for x in extras))
        return ns

    def _unknown(self, parser, arg: str) -> str:
        """An unrecognized argument as the error names it: an option with the closest options of ``parser`` (and
        of the top-level parser, whose global options a command also takes)."""
        if not arg.startswith("-") or arg == "-" or arg.lstrip("-")[:1].isdigit():
            return arg
        known = set(parser._option_string_actions) | set(self._option_string_actions)
        close = suggest(arg.split("=", 1)[0], sorted(known))
        return f"{arg} (did you mean {' or '.join(close)}?)" if close else arg


def _output_options(sp, what: str) -> None:
    """--force and --mkdir of a command that writes a file (the policy of :mod:`symseq.present.files`)."""
    sp.add_argument("--force", action="store_true", help=f"overwrite {what} if it exists")
    sp.add_argument("--mkdir", action="store_true",
                    help=f"create the missing folders of {what} (never at the root of the file system)")


def _global_options(*, after: bool) -> argparse.ArgumentParser:
    """The options every command accepts before or after its name: before it they have their defaults; after it
    (``after=True``) none, so that one given before the command is not reset by the command's parser."""
    g = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if after else False
    g.add_argument("--no-color", action="store_true", default=default, help="plain output without colours")
    g.add_argument("--traceback", action="store_true", default=default, help="show Python tracebacks of failures")
    return g


def _derivation_options(*, after: bool) -> argparse.ArgumentParser:
    """Where derivations are loaded from, before or after the command's name (see :func:`_global_options`); the
    --path folders given after it are added to those given before it (:func:`_parse`)."""
    g = argparse.ArgumentParser(add_help=False)
    default = argparse.SUPPRESS if after else False
    g.add_argument("--path", action="append", dest="path_after" if after else "path",
                   default=argparse.SUPPRESS if after else [], metavar="DIR",
                   help="also load derivations from this file or folder, or from DIR/derivations "
                        "(repeatable; default: ./derivations when the current folder has one)")
    g.add_argument("--no-bundled", action="store_true", default=default,
                   help="ignore the derivations shipped with symseq")
    g.add_argument("--no-local", action="store_true", default=default,
                   help="do not import ./derivations of the current folder (importing a module runs its "
                        "code; --path DIR still loads DIR)")
    g.add_argument("--no-cache", action="store_true", default=default,
                   help="neither read nor write the cache of derivations decided in earlier runs (kept in "
                        "$SYMSEQ_CACHE_DIR, else the user's cache folder, e.g. ~/.cache/symseq; "
                        "SYMSEQ_NO_CACHE=1 does the same)")
    return g


class _Version(argparse.Action):
    """--version: print the installed distribution's version and exit (read only when asked for)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"symseq {_version()}\n")
        parser.exit()


def _version() -> str:
    """The installed distribution's version (package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("symseq")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(version unknown: not installed; pip install . records it)"


def _parse(argv):
    """The parsed command line, with the --path folders given before and after the command together."""
    args = _parser().parse_args(argv)
    args.path = list(args.path) + list(getattr(args, "path_after", []))
    return args


def _dpi(text: str) -> float:
    """A resolution for --dpi: dots per inch as :func:`symseq.present.figures.check_dpi` accepts them."""
    from .present.figures import check_dpi

    try:
        return check_dpi(float(text))
    except ValueError:  # not a number, or outside the range (ConventionError is a ValueError)
        raise argparse.ArgumentTypeError(f"expected a number of dots per inch from 10 to 1200 (e.g. 300), "
                                         f"got {text!r}") from None


def _jobs(text: str) -> int:
    """A number of processes for verify -j: a whole number, 1 or more."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, 1 or more (e.g. -j 2), got {text!r}")
    return n


def _percent(text: str) -> float:
    """A percentage for --fail-under: a number from 0 to 100."""
    try:
        x = float(text)
    except ValueError:
        x = None
    if x is None or not 0 <= x <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {text!r}")
    return x


def _catalogue(args):
    """The derivations the command line names a place for, as their modules' manifests in the cache describe them
    (:func:`symseq.authoring.catalogue`: a module is imported only where no manifest still holds)."""
    from .authoring.discovery import catalogue, default_paths

    paths = list(args.path) or ([] if args.no_local else [str(p) for p in default_paths()])
    return catalogue(paths, include_bundled=not args.no_bundled, cache=_cache(args))


def _cache(args):
    """The cache of derivations decided in earlier runs (:mod:`symseq.cache`), disabled by --no-cache."""
    from .cache import Cache
    from .read.grammar import keep_tables

    cache = Cache(enabled=False if args.no_cache else None)
    keep_tables(cache.root if cache.enabled else None)  # the grammar's parser tables too
    return cache


def _derivations(args, names=()):
    """The derivations named (all of them when ``names`` is empty), their modules imported, nothing built yet;
    only the named ones' modules are imported when the cache describes the others."""
    from .authoring.discovery import select

    return [e.load() for e in select(_catalogue(args), names)]


def _inputs(ds, *files) -> list[str]:
    """The files a command reads (its derivation modules, a handout): an output path may be none of them."""
    mods = [getattr(getattr(d, "module", None), "__file__", None) for d in ds]
    return [str(f) for f in (*files, *mods) if f]


def cmd_list(args, out) -> int:
    """The derivations as one table (the report style of :func:`symseq.present.console.report_table`): the name,
    never split across lines at any width, with the handout's file name below it (shortened with an ellipsis when
    the terminal is too narrow for it), the number of sections, and the title, wrapped between words."""
    from rich.text import Text

    from .present.console import report_table
    from .present.fit import Fit

    found = _catalogue(args)
    t = report_table("derivations", ["name and handout", "sections", "title"])
    t.columns[0].no_wrap, t.columns[0].overflow = True, "ellipsis"
    t.columns[0].min_width = max((len(d.name) for d in found), default=4)
    t.columns[1].justify, t.columns[1].no_wrap = "right", True
    for d in found:  # an author's text as written: "[/x]" in a title is not markup
        t.add_row(Text.assemble(d.name, "\n", (d.source, "dim")), str(d.sections), Fit(d.title))
    out.print(t)
    return 0


def cmd_verify(args, out) -> int:
    from .present.terminal import check_all, fragile_notes, print_line, problems, summary, verify_table

    _check_digits(args.digits)
    if args.dps < 15:
        raise SymseqError(f"--dps must be at least 15; got --dps {args.dps}")
    _check_output_format(args)
    ds = _derivations(args, args.names)
    if not ds:
        raise SymseqError("no derivations found; pass --path DIR to load an author's derivations folder")
    _check_json(args, _inputs(ds))
    if args.json == "-":  # JSON on stdout: the report goes to stderr
        out = _console(args, sys.stderr)
    report = check_all(ds, args.dps, out=_console(args, sys.stderr), jobs=args.jobs, cache=_cache(args))
    if args.output_format != "text":
        _machine_output(args, verify=report)
    else:
        listing = _listing(args, out)
        if listing == "all":
            for d in ds:
                out.print(verify_table(d, args.digits, width=out.width))
            for line in fragile_notes(report):
                print_line(out, line, "yellow")
        if listing != "quiet":
            for line in problems(report):
                print_line(out, line, "bold red")
            if args.traceback:
                for _, s in report.broken:
                    out.print(s.error, markup=False)
            _print_causes(report, out)
        print_line(out, summary(report, notes_listed=listing == "all"), "green" if report.ok else "bold red")
    if args.json and args.json != "-" or args.json == "-" and args.output_format == "text":
        _write_json(args, report.as_json(), _inputs(ds))
    return 2 if report.broken else 0 if report.ok else 1


def _check_output_format(args) -> None:
    """Refuse, before the work, what --output-format cannot do: a second document on standard output (--json -
    with github or junit), or one JSON document for several audited files."""
    if args.json == "-" and args.output_format in ("github", "junit"):
        raise SymseqError(f"--json - and --output-format {args.output_format} would both write to standard "
                          f"output; give --json a FILE")
    files = getattr(args, "files", ())
    if len(files) > 1 and (args.json or args.output_format == "json"):
        raise SymseqError(f"--json and --output-format json write one document for one FILE; got {len(files)} "
                          f"files: audit them one at a time, or use --output-format github or junit")


def _machine_output(args, *, verify=None, audits=()) -> None:
    """Print the report of a verify run (``verify``) or of audits (``audits``: (file, report, causes) each) on
    standard output as --output-format asks: the JSON document, GitHub annotations, or JUnit XML."""
    from .present import ci

    fmt = args.output_format
    if fmt == "json":
        if verify is not None:
            document = verify.as_json()
        else:
            (_, rep, causes), = audits
            document = rep.as_json(causes)
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "github":
        lines = ci.verify_annotations(verify) if verify is not None else \
            [x for file, rep, _ in audits for x in ci.audit_annotations(rep, file)]
        sys.stdout.write("".join(x + "\n" for x in lines))
    else:
        root = ci.verify_junit(verify) if verify is not None else ci.junit_document(
            [ci.audit_suite(rep, file, args.fail_under) for file, rep, _ in audits], "symseq audit")
        sys.stdout.write(ci.junit_text(root))


def _listing(args, out) -> str:
    """How much of a report to print: --quiet, --failures or --all as asked; by default all of it on a terminal,
    and what failed with the summary elsewhere (``symseq verify > log`` of a passing run writes one line)."""
    return args.output or ("all" if out.is_terminal else "failures")


def _console(args, file=None):
    """A console on ``file`` (standard output by default) with the colours the command line asks for."""
    from .present.console import console

    return console(no_color=args.no_color or bool(os.environ.get("NO_COLOR")), file=file)


def _print_causes(report, out) -> None:
    """For derivations that state steps (s.step), the failing claims by cause (:attr:`Report.causes`, page by
    page): roots first, each with its chain."""
    from .present.terminal import cause_lines, print_line

    lines = cause_lines(report.causes)
    if lines:
        print_line(out, "errata by cause (root: wrong even from the page's own printed operands):", "bold")
    for line in lines:
        print_line(out, line, "red")


def _check_json(args, inputs) -> None:
    """Refuse a --json path before the work, not after it (see :mod:`symseq.present.files`)."""
    from .present.files import check_target

    if args.json and args.json != "-":
        check_target(args.json, force=args.force, mkdir=args.mkdir, inputs=inputs)


def _write_json(args, document, inputs=()):
    """The JSON document on stdout ('-') or in a regular file, as every output file is written (over an existing
    file only with --force, into a missing folder only with --mkdir), never over one of ``inputs``."""
    from .present.files import write_atomic

    text = json.dumps(document, indent=2, ensure_ascii=False)
    if args.json == "-":
        sys.stdout.write(text + "\n")
        return
    write_atomic(args.json, lambda f: f.write(text + "\n"), force=args.force, mkdir=args.mkdir, inputs=inputs)


def cmd_show(args, out) -> int:
    from .present.show import show

    _check_digits(args.digits)
    (d,) = _derivations(args, [args.name])
    show(d, _sections(d, args.section), out, digits=args.digits, progress=_console(args, sys.stderr))
    return 0


def _sections(d, wanted):
    sections = d.sections
    if wanted:
        sections = [s for s in sections if s.title.startswith(wanted) or wanted in s.title] or \
            [s for s in sections if any(getattr(x, "label", "") == wanted or getattr(x, "label", "").startswith(wanted + " ")
                                        for x in s.displays)]
        if not sections:
            raise SymseqError(f"no section of {d.name} matches {wanted!r}; sections: "
                              + "; ".join(s.title for s in d.sections))
    return sections


def cmd_latex(args, out) -> int:
    from .present.files import check_target, write_atomic
    from .present.latex import derivation_latex

    _check_digits(args.digits)
    (d,) = _derivations(args, [args.name])
    to_file = args.output and args.output != "-"
    if to_file:
        check_target(args.output, force=args.force, mkdir=args.mkdir, inputs=_inputs([d]))
    text = derivation_latex(d, _sections(d, args.section), standalone=args.standalone, digits=args.digits,
                            claims=not args.no_claims, full=args.full)
    if not to_file:
        sys.stdout.write(text)
        return 0
    path = write_atomic(args.output, lambda f: f.write(text), force=args.force, mkdir=args.mkdir,
                        inputs=_inputs([d]))
    print(f"wrote {path}", file=sys.stderr)
    return 0


def cmd_figure(args, out) -> int:
    from .present import figures

    (d,) = _derivations(args, [args.name])
    kind = args.kind
    dpi = figures.DPI if args.dpi is None else args.dpi
    target = args.output or f"{d.name}-{_slug(kind if kind != 'heatmap' or not args.label else args.label[0])}.png"
    figures.figure_format(target)
    from .present.files import check_target

    check_target(target, force=args.force, mkdir=args.mkdir, inputs=_inputs([d]))
    if kind == "gradient-paths":
        fig = figures.gradient_paths_figure(_gradient_paths(d, args.label), dpi=dpi)
    elif kind == "heads":
        specs = _heatmaps(d, args.label, args.section, several=True)
        if not args.label:  # chosen for the author: say which
            print(f"heads: {'; '.join(x.label for x in specs)} side by side, one colour scale per kind "
                  f"(choose with --label)", file=sys.stderr)
        fig = figures.heads_figure(specs, dpi=dpi)
    elif kind == "heatmap":
        (spec,) = _heatmaps(d, args.label, args.section, several=False)
        fig = figures.heatmap_figure(spec, dpi=dpi)
    else:
        (spec,) = _heatmaps(d, [kind], args.section, several=False)
        fig = figures.heatmap_figure(spec, dpi=dpi)
    path = figures.save(fig, target, force=args.force, mkdir=args.mkdir, inputs=_inputs([d]))
    print(f"wrote {path}", file=sys.stderr)
    return 0


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "figure"


def _heatmaps(d, labels, section, *, several: bool):
    """The heatmaps a figure command asks for: by label (or its start), by section, or the only candidates."""
    from .authoring import HeatmapSpec

    sections = _sections(d, section) if section else d.sections
    specs = [(s, x) for s in sections for x in s.displays if isinstance(x, HeatmapSpec)]
    known = "; ".join(x.label for _, x in specs) or "none"
    if labels:
        chosen = []
        for lab in labels:
            hits = [x for _, x in specs if x.label == lab] or [x for _, x in specs if x.label.startswith(lab)]
            if len(hits) != 1:
                why = "matches several" if hits else "matches none"
                raise SymseqError(f"{lab!r} {why} of the heatmaps of {d.name}; heatmaps: {known}")
            chosen.append(hits[0])
        if not several and len(chosen) != 1:
            raise SymseqError("one heatmap at a time: give one --label, or use the kind 'heads' to compare several")
        return chosen
    if not specs:
        raise SymseqError(f"{d.name} records no heatmaps" + (f" in {section!r}" if section else "")
                          + " (a section records one with section.heatmap(...))")
    if several:
        if section or len({id(s) for s, _ in specs}) == 1:
            return [x for _, x in specs]
        multi = [s for s in sections if sum(isinstance(x, HeatmapSpec) for x in s.displays) > 1]
        if len(multi) == 1:
            return [x for x in multi[0].displays if isinstance(x, HeatmapSpec)]
        raise SymseqError(f"say which heatmaps to compare with --label (repeatable) or --section; heatmaps: {known}")
    if len(specs) != 1:
        raise SymseqError(f"{d.name} records several heatmaps; choose one with --label: {known}")
    return [specs[0][1]]


def _gradient_paths(d, labels):
    """The gradient-path figure a derivation records (``section.gradient_paths``), by label when given."""
    from .authoring import GradientPathsSpec

    specs = [x for s in d.sections for x in s.figures if isinstance(x, GradientPathsSpec)]
    if labels:
        specs = [x for x in specs if any(x.label.startswith(lab) for lab in labels)]
    if not specs:
        raise SymseqError(f"{d.name} records no gradient-path figure (a section records one with "
                          f"section.gradient_paths(label, w_h=..., ...))")
    if len(specs) > 1:
        raise SymseqError(f"{d.name} records several gradient-path figures; choose one with --label: "
                          + "; ".join(x.label for x in specs))
    return specs[0]


def cmd_audit(args, out) -> int:
    """``symseq audit FILE [FILE ...]``: each FILE against the derivations named, or those whose source is FILE;
    with none, the page's own arithmetic alone (:func:`symseq.audit.arithmetic.audit_page`). One report, one
    verdict, one rendering per file; the exit status is 1 when any file's audit fails."""
    from .audit import for_source
    from .authoring.discovery import select

    _check_output_format(args)
    found = _catalogue(args)
    audits, status = [], 0
    for file in args.files:
        ds = select(found, args.derivation) if args.derivation else for_source(file, found)
        if not ds:  # no derivation: the page's own arithmetic (a short run: no cycle collection)
            code, done = without_cycle_collection(_audit)(args, out, file, [], known=[d.name for d in found])
        else:
            code, done = _audit(args, out, file, [e.load() for e in ds])
        audits.append(done)
        status = max(status, code)
    if args.output_format != "text":
        _machine_output(args, audits=audits)
    return status


def _audit(args, out, file, ds: list, known=()):
    """Audit ``file`` against the loaded derivations ``ds`` (none: its own arithmetic), print the report (with the
    errata by cause, then the summary line last) in the text format, write --json, and return (the exit status of
    :meth:`~symseq.audit.report.AuditReport.failures`, (file, report, causes))."""
    from .audit import read
    from .audit.causes import classify
    from .present.audit import render

    inputs = _inputs(ds, file) if ds else [file]
    _check_json(args, inputs)
    if args.json == "-":
        out = _console(args, sys.stderr)
    if ds:
        from .audit import audit_file, for_source

        for d in for_source(file, ds):  # what a derivation reads from its page, it reads from the page audited
            d.use_page(file)
        rep = audit_file(file, ds, fmt=args.format)
    else:
        from .audit.arithmetic import audit_page

        rep = audit_page(read(file, fmt=args.format))
    causes = classify(read(file, fmt=args.format), rep.errata,
                      claims=[c for d in ds for c in d.claims]) if rep.errata else []
    why = rep.failures(args.fail_under)
    if args.output_format == "text":
        render(rep, out, _listing(args, out), known=known, causes=causes, verdict=why)
    if args.json and args.json != "-" or args.json == "-" and args.output_format == "text":
        _write_json(args, rep.as_json(causes), inputs)
    return (2 if rep.broken else 1 if why else 0), (file, rep, causes)


def cmd_new(args, out) -> int:
    """Write ``./derivations/NAME.py`` (a starter that verifies as written) and, when the folder has none, a
    ``conftest.py`` for pytest; refuse (exit 2) a name that is not one, is bundled, or whose file exists."""
    from .authoring import bundled
    from .authoring.starter import NAME, conftest, module_name, starter
    from .present.files import write_atomic

    name = args.name
    if not NAME.match(name):
        raise SymseqError(f"{name!r} is not a derivation name: use a letter, then letters, digits, '-' or '_' "
                          f"(such as my-example)")
    if any(d.name == name for d in bundled()):
        raise SymseqError(f"{name!r} is the name of a derivation bundled with symseq (symseq list); choose "
                          f"another name")
    target = Path("derivations") / f"{module_name(name)}.py"
    if target.exists() or target.is_symlink():
        raise SymseqError(f"{target} already exists; symseq new never overwrites a file: choose another NAME, or "
                          f"edit that file")
    write_atomic(target, lambda f: f.write(starter(name)), mkdir=True)  # ./derivations: the command's own folder
    written = [str(target)]
    if not Path("conftest.py").exists() and not Path("conftest.py").is_symlink():
        write_atomic("conftest.py", lambda f: f.write(conftest()))
        written.append("conftest.py")
    out.print(f"wrote {' and '.join(written)}", markup=False, highlight=False)
    out.print(f"next: replace the placeholders with your page's own, then run `symseq verify {name}`, "
              f"`symseq audit YOUR-PAGE.md` and `pytest` (pip install pytest, in this environment)", markup=False, highlight=False, soft_wrap=True)
    return 0


def main(argv=None) -> int:
    """Run the command line; return its exit status (:data:`EXIT_CODES`)."""
    streams = sys.stdout, sys.stderr
    # a reader that stops early ends the output, not the verdict
    sys.stdout, sys.stderr = _ClosedPipeGuard(sys.stdout), _ClosedPipeGuard(sys.stderr)
    try:
        args = _parse(argv)
    except BaseException:
        _restore(streams)
        raise
    try:
        out = _console(args)
        commands = {"list": cmd_list, "verify": cmd_verify, "show": cmd_show, "latex": cmd_latex,
                    "figure": cmd_figure, "audit": cmd_audit, "new": cmd_new}
        return commands[args.command](args, out)
    except (FileSystemError, BackendUnavailable) as exc:
        return _error(args, exc, 3)
    except SymseqError as exc:
        return _error(args, exc, 2)
    except OSError as exc:  # the system refused something symseq did not expect to fail
        return _error(args, exc, 3, f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else None)
    except KeyboardInterrupt:  # pragma: no cover
        return 130
    except Exception as exc:  # a bug: never exit 1, which says a claim is wrong
        return _error(args, exc, 4, f"internal error: {type(exc).__name__}: {exc} (a bug in symseq; run again "
                                    f"with --traceback to see where, and report it)")
    finally:
        _restore(streams)
        if argv is None:  # the command line of a process that ends now (the console script, python -m symseq.cli)
            _leave_to_exit()


def _leave_to_exit() -> None:
    """Move every object alive now out of the cycle collector's reach (``gc.freeze``): the collections Python runs
    while the process shuts down then skip the SymPy and NumPy objects the command loaded, which took 0.15 s of CPU
    after an audit that took 0.5 s. Only for a process that ends with the command: frozen objects are never
    collected."""
    import gc

    gc.freeze()


def _restore(streams) -> None:
    """Flush the guarded standard output and error, and put the original streams back."""
    for guard in (sys.stdout, sys.stderr):
        guard.flush()
    sys.stdout, sys.stderr = streams


def _error(args, exc, code: int, text: str | None = None) -> int:
    """Print one line for ``exc`` on standard error (or raise it again with --traceback); return ``code``."""
    if args.traceback:
        raise exc
    try:
        print(f"symseq: error: {text or exc}", file=sys.stderr)
    except OSError:  # standard error is gone too
        pass
    return code


class _ClosedPipeGuard:
    """Standard output (or error) that stops writing, quietly, once its reader has gone (``symseq verify | head``).

    The first write into a closed pipe points the process's stream at the null device, so neither
    later writes nor the flush at exit raise ``BrokenPipeError`` (or print "Exception ignored"); the command
    runs to its verdict, which is still its exit status."""

    def __init__(self, stream):
        self._stream = stream
        self.closed_by_reader = False

    def write(self, text):
        if self.closed_by_reader:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self):
        if self.closed_by_reader:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self):
        self.closed_by_reader = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        except (OSError, AttributeError, ValueError):  # not a file descriptor (a test's capture): nothing to flush
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
