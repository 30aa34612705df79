"""Reports for CI services and editors: GitHub workflow annotations and JUnit XML, for ``symseq verify`` and
``symseq audit`` (``--output-format github`` and ``--output-format junit``).

Renderers only: they receive a finished :class:`~symseq.verify.report.Report` or
:class:`~symseq.audit.report.AuditReport` and print it in another form.

* **github**: one workflow command per finding, ``::error file=PATH,line=N,title=TITLE::MESSAGE``, which a GitHub
  Actions run shows as an annotation on that line of the file (`workflow commands`_). An erratum of an audit is
  one line at the handout's file and line; a claim of ``verify`` that does not hold is one line at the line of
  its section that prints it. The message and the properties are escaped as GitHub's runner reads them
  (:func:`escape_data`, :func:`escape_property`).
* **junit**: one JUnit XML document (``<testsuites>``), one ``<testsuite>`` per derivation (verify) or per
  audited file (audit), one ``<testcase>`` per claim (verify) or per checked statement and erratum (audit),
  with a ``<failure>`` for each that does not hold, an ``<error>`` for a section that did not build or a claim
  that could not be checked, and a ``<skipped>`` for a section not checked (a package it needs is missing).

.. _workflow commands: https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path


def escape_data(text: str) -> str:
    """The message of a workflow command as GitHub's runner reads it back: ``%`` → ``%25``, ``\\r`` → ``%0D``,
    ``\\n`` → ``%0A``."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value of a workflow command (``file=``, ``title=``): :func:`escape_data`, and ``:`` → ``%3A``,
    ``,`` → ``%2C``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(message: str, *, file: str | None = None, line: int | None = None, title: str = "",
               level: str = "error") -> str:
    """One workflow command: ``::error file=F,line=N,title=T::message`` (properties left out when not given)."""
    props = [f"{k}={escape_property(v)}" for k, v in (("file", file), ("line", line), ("title", title)) if v]
    return f"::{level} {','.join(props)}::{escape_data(message)}" if props else f"::{level}::{escape_data(message)}"


def shown_path(path) -> str:
    """A handout's path as an annotation names it: relative to the current folder when it lies under it (a
    workflow runs at the repository's root), else as given."""
    p = Path(path)
    try:
        return Path(os.path.relpath(p.resolve(), Path.cwd().resolve())).as_posix() if p.is_absolute() \
            and p.resolve().is_relative_to(Path.cwd().resolve()) else p.as_posix()
    except (OSError, ValueError):
        return p.as_posix()


# --- audit -------------------------------------------------------------------------------------------------------

def _audit_line(rep, line: int | None) -> int | None:
    """The line of the file an audit's ``line`` is: itself in a text, Markdown or LaTeX file; none for a rendered
    notebook or HTML page (its place, such as ``cell 7, line 3``, is in the message)."""
    return None if line is None or rep.rendered else line


def audit_annotations(rep, file: str) -> list[str]:
    """The GitHub annotations of an audit of the handout ``file`` (the path as given on the command line): one per
    erratum at its line, one per claim or input missing from the text (at the first line where it was expected),
    one per section that did not build and per claim that could not be checked, and one for the verdict when the
    audit fails for another reason (nothing of the derivation in the text, coverage below --fail-under)."""
    path = shown_path(file)
    out = []
    for e in rep.errata:
        place = f" ({rep.where(e.line)})" if rep.rendered and e.line is not None else ""
        where = "not located in the text: " if e.line is None else ""
        msg = f"{where}printed {e.printed}, correct {e.correct}: {e.fault}" + (f" (value {e.value})" if e.value
                                                                                else "") + f"{place}; {e.source}"
        out.append(annotation(msg, file=path, line=_audit_line(rep, e.line), title=f"symseq audit: wrong number "
                                                                                   f"{e.printed}"))
    for m in rep.missing:
        line = m.lines[0] if m.lines else None
        msg = f"{m.kind} {m.id} prints {m.printed}, which is no longer in the text"
        out.append(annotation(msg, file=path, line=_audit_line(rep, line), title=f"symseq audit: {m.kind} missing"))
    for d, title, err in rep.broken:
        out.append(annotation(f"{d} · {title} did not build, so none of its claims was checked: {err}", file=path,
                              title="symseq audit: section did not build"))
    for claim, err in rep.undecided:
        out.append(annotation(f"{claim} could not be checked: {err}", file=path,
                              title="symseq audit: claim not checked"))
    if rep.failed and not out:
        out.append(annotation("; ".join(rep.failures()), file=path, title="symseq audit failed"))
    return out


def audit_suite(rep, file: str, fail_under=None) -> ET.Element:
    """One ``<testsuite>`` for the audit of ``file``: a test case per statement the page's own arithmetic checks
    (right, or a failure), per quantity token a claim covers, per erratum (a failure), per claim missing from the
    text (a failure), per section that did not build and claim that could not be checked (errors), and one for the
    coverage when ``fail_under`` is given."""
    path = shown_path(file)
    suite = ET.Element("testsuite", name=path)
    failed_lines = {e.line for e in rep.errata}

    def case(name, classname, line=None):
        attrs = {"name": name, "classname": classname, "file": path}
        if line is not None and not rep.rendered:
            attrs["line"] = str(line)
        return ET.SubElement(suite, "testcase", attrs)

    if rep.arithmetic is not None:
        for s in rep.arithmetic.statements:
            if s.status == "wrong" or s.line in failed_lines:
                continue  # its erratum is the test case
            c = case(f"{rep.where(s.line)}: {s.text}", f"{path}.arithmetic", s.line)
            if s.status != "ok":  # within the rounding of its operands: only a derivation decides it
                ET.SubElement(c, "skipped", message="within the rounding of its printed operands: a derivation "
                                                    "decides it")
    for t in rep.tokens:
        by = getattr(t.attribution, "by", None)
        if t.attribution.verdict == "covered" and hasattr(by, "id") and hasattr(by, "printed"):
            case(f"{rep.where(t.line)}: {t.text} ({by.id})", f"{path}.{by.derivation}", t.line)
    for e in rep.errata:
        c = case(f"{rep.where(e.line)}: {e.printed} ({e.source})", f"{path}.errata", e.line)
        ET.SubElement(c, "failure", message=f"printed {e.printed}, correct {e.correct}",
                      type="wrong number").text = f"{e.fault}; value {e.value}; {e.context}".strip("; ")
    for m in rep.missing:
        c = case(f"{m.kind} missing: {m.id}", f"{path}.missing", m.lines[0] if m.lines else None)
        ET.SubElement(c, "failure", message=f"{m.printed} is no longer in the text", type="missing")
    for d, title, err in rep.broken:
        ET.SubElement(case(f"{d} · {title}", f"{path}.sections"), "error", message=err, type="section did not build")
    for d, title, why in getattr(rep, "skipped", ()):
        ET.SubElement(case(f"{d} · {title}", f"{path}.sections"), "skipped", message=why)
    for claim, err in rep.undecided:
        ET.SubElement(case(claim, f"{path}.claims"), "error", message=err, type="claim not checked")
    if fail_under is not None:
        c = case(f"coverage at least {fail_under:g}%", f"{path}.coverage")
        why = [w for w in rep.failures(fail_under) if "coverage" in w or "no quantity tokens" in w]
        if why:
            ET.SubElement(c, "failure", message=why[0], type="coverage")
    return _counted(suite)


# --- verify ------------------------------------------------------------------------------------------------------

class PageLines:
    """The handout of each derivation as an annotation names it: its path relative to the current folder, and the
    line of a claim's section that prints the claim (else the section's heading line), read once per page.

    A page that cannot be found or read is named by its file name alone, with no line."""

    def __init__(self):
        self._pages: dict = {}

    def page(self, d):
        """(path as shown, the Document of the page or None) of derivation ``d``."""
        key = (d.name, d.source)
        if key not in self._pages:
            try:
                from ..authoring.page import read_page

                path = d.page_path
                doc = read_page(path)
                self._pages[key] = (shown_path(path), doc)
            except Exception:  # no page to point at: name the file as the derivation does
                self._pages[key] = (d.source, None)
        return self._pages[key]

    def line(self, d, doc, section: str, printed: str | None) -> int | None:
        """The line of ``doc`` in ``d``'s section ``section`` that prints ``printed`` (its first), else the first
        line of the section; None for a notebook or HTML page (its lines are not the file's)."""
        if doc is None or doc.places is not None:
            return None
        from ..authoring.page import section_lines

        span = section_lines(doc, [s.title for s in d.sections], section)
        if span is None:
            return None
        first, last = span
        if printed:
            for k in range(first, min(last, len(doc.lines)) + 1):
                if printed in doc.lines[k - 1]:
                    return k
        return first


def verify_annotations(report) -> list[str]:
    """The GitHub annotations of a verify run: one per claim that does not hold or could not be checked, at the
    handout's file and the line of its section that prints it; one per section that did not build and per
    derivation that states no claim."""
    pages = PageLines()
    by_name = {d.name: d for d in report.derivations}
    out = []
    from .terminal import _entries_text

    for d, s in report.broken:
        path, doc = pages.page(d)
        out.append(annotation(f"{d.name} · {s.title} did not build: {s.error.splitlines()[0]}", file=path,
                              line=pages.line(d, doc, s.title, None), title="symseq verify: section did not build"))
    for d in report.unclaimed:
        out.append(annotation(f"{d.name} states no claim, so nothing of {d.source} was checked",
                              file=pages.page(d)[0], title="symseq verify: no claim"))
    for c in report.failures:
        d = by_name.get(c.derivation)
        path, doc = pages.page(d) if d is not None else (c.source, None)
        line = pages.line(d, doc, c.location.section, c.printed) if d is not None else None
        what = f" · {c.what}" if c.what else ""
        out.append(annotation(f"{c.location}{what}: {_entries_text(c.result)}", file=path, line=line,
                              title=f"symseq verify: {c.result.status} {c.printed}"))
    return out


def verify_junit(report) -> ET.Element:
    """The JUnit XML of a verify run: ``<testsuites>`` with one ``<testsuite>`` per derivation and one
    ``<testcase>`` per claim (classname ``derivation.section``); a mismatch is a ``<failure>``, a claim that could
    not be checked or a section that did not build an ``<error>``, a skipped claim or section a ``<skipped>``."""
    pages = PageLines()
    root = ET.Element("testsuites", name="symseq verify")
    by_derivation: dict = {}
    for c in report.claims:
        by_derivation.setdefault(c.derivation, []).append(c)
    for d in report.derivations:
        path, doc = pages.page(d)
        suite = ET.SubElement(root, "testsuite", name=d.name, file=path)
        for s in d.sections:
            if s.error or s.skipped:
                c = ET.SubElement(suite, "testcase", name=s.title, classname=f"{d.name}.{s.title}", file=path)
                if s.error:
                    ET.SubElement(c, "error", message=s.error.splitlines()[0], type="section did not build")
                else:
                    ET.SubElement(c, "skipped", message=f"not checked: {s.skipped}")
        for claim in by_derivation.get(d.name, []):
            r = claim.result
            attrs = {"name": claim.id, "classname": f"{d.name}.{claim.location.section}", "file": path}
            if r.status in ("mismatch", "error"):
                line = pages.line(d, doc, claim.location.section, claim.printed)
                if line is not None:
                    attrs["line"] = str(line)
            c = ET.SubElement(suite, "testcase", attrs)
            if r.status == "mismatch":
                ET.SubElement(c, "failure", message=f"printed {claim.printed}", type="mismatch").text = r.message
            elif r.status == "error":
                ET.SubElement(c, "error", message=r.message.splitlines()[0] if r.message else "error",
                              type="error").text = r.message
            elif r.status == "skipped":
                ET.SubElement(c, "skipped", message=r.message)
        _counted(suite)
    return _counted(root)


def _counted(element: ET.Element) -> ET.Element:
    """Set ``tests``, ``failures``, ``errors`` and ``skipped`` of a ``<testsuite>`` or ``<testsuites>`` from the
    test cases under it; returns ``element``."""
    cases = list(element.iter("testcase"))
    element.set("tests", str(len(cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attr, str(sum(c.find(tag) is not None for c in cases)))
    return element


def junit_text(root: ET.Element) -> str:
    """A JUnit document as text: the XML declaration, then ``root`` indented."""
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_document(suites: list[ET.Element], name: str) -> ET.Element:
    """A ``<testsuites>`` named ``name`` holding ``suites``, counted."""
    root = ET.Element("testsuites", name=name)
    root.extend(suites)
    return _counted(root)
