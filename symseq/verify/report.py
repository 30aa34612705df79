"""The verification report: every claim of some derivations decided once, with the verdict.

:func:`verify` builds the derivations' sections, decides each claim at one
working precision (its values computed by the derivation's
:class:`~symseq.values.Values`, its rounding by :mod:`symseq.numbers`), and
returns a :class:`Report`. The report is the one place the verdict is decided
(:attr:`Report.ok`, the exit status of ``symseq verify``) and the JSON records
are made (:meth:`Report.as_json`); the terminal and LaTeX renderers only
render it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Callable

from ..errors import SymseqError
from .causes import classify_claims
from .claims import STATUSES, Claim
from .steps import Step

SCHEMA = "symseq-verify/2"  # the name and version of the JSON document :meth:`Report.as_json` makes

# progress(stage, done, total, name): stage is "building" (derivations) or "checking" (claims)
Progress = Callable[[str, int, int, str], None]


@dataclass
class Report:
    """The outcome of checking the claims of ``derivations`` at ``dps`` digits.

    Attributes:
        derivations: the derivations, in order.
        claims: every claim of their sections, in order, each decided (``claim.result``).
        dps: the working precision in decimal digits.
    """

    derivations: list
    claims: list = field(default_factory=list)
    dps: int = 50
    _causes: list | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """One line: how many derivations and claims, the claims per status, and the verdict."""
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        return (f"Report({len(self.derivations)} derivation(s), {len(self.claims)} claims"
                + (f": {counts}" if counts else "") + f"; {'holds' if self.ok else 'fails'})")

    @property
    def counts(self) -> dict:
        """Claims per status ("ok", "mismatch", "error", "skipped"), every status present."""
        c = Counter(claim.result.status for claim in self.claims)
        return {k: c.get(k, 0) for k in STATUSES}

    @property
    def broken(self) -> list:
        """(derivation, section) for each section that failed to build."""
        return [(d, s) for d in self.derivations for s in d.sections if s.error]

    @property
    def skipped(self) -> list:
        """(derivation, section) for each section not checked (a package it needs is missing)."""
        return [(d, s) for d in self.derivations for s in d.sections if s.skipped]

    @property
    def failures(self) -> list[Claim]:
        """The claims that do not hold (mismatch) or could not be checked (error), in order."""
        return [c for c in self.claims if c.result.status in ("mismatch", "error")]

    @property
    def fragile(self) -> list[tuple[Claim, str]]:
        """(claim, note) for each printed decimal that holds but lies within 1% of a unit of its last digit from a
        rounding boundary (:data:`~symseq.verify.claims.FRAGILE_UNITS`): reported, not failed."""
        return [(c, note) for c in self.claims for note in c.result.fragile]

    @property
    def unclaimed(self) -> list:
        """The derivations that state no claim at all, none of whose sections was skipped or failed to build:
        nothing of their page was checked, which must not read as a pass."""
        return [d for d in self.derivations
                if not any(s.claims or s.skipped or s.error for s in d.sections)]

    @property
    def ok(self) -> bool:
        """The verdict: no claim fails, every section builds, and every derivation states a claim (skipped claims
        and sections do not fail)."""
        return not self.failures and not self.broken and not self.unclaimed

    @property
    def causes(self) -> list:
        """The failing claims classified by cause (:func:`~symseq.verify.causes.classify_claims`), each page's
        claims (those of the derivations with one ``source``) by that page's own steps (``s.step``) and through
        their ledgers (:func:`~symseq.verify.causes.trace`): every root (or drift) first, in the claims' order, then
        the propagated ones; empty when no claim fails, or when a page with no step has only roots of their own."""
        if self._causes is None:
            self._causes = _merge_causes([_causes(cs, self.dps) for cs in _by_page(self.claims).values()])
        return self._causes


    def as_json(self) -> dict:
        """The JSON document of ``symseq verify --json`` (schema ``symseq-verify/2``, the file
        ``symseq/schema/verify-2.schema.json``): the verdict, the working precision, the claims per status, one
        record per claim (:meth:`Claim.record`, the same fields and types for every claim), one per section
        that failed to build (derivation, source, section, the first line of its error) and one per section not
        checked (derivation, source, section, why: a package it needs is missing), so that a run without an
        optional package is told apart from a full one (``"complete"`` is false)."""
        return {
            "schema": SCHEMA,
            "ok": self.ok,
            "complete": not self.skipped,
            "dps": self.dps,
            "counts": self.counts,
            "claims": [c.record() for c in self.claims],
            "broken_sections": [{"derivation": d.name, "source": d.source, "section": s.title,
                                 "message": s.error.splitlines()[0]} for d, s in self.broken],
            "skipped_sections": [{"derivation": d.name, "source": d.source, "section": s.title,
                                  "reason": s.skipped} for d, s in self.skipped],
        }


def verify(derivations, dps: int = 50, *, progress: Progress | None = None, sections=None, jobs: int = 1,
           cache=None) -> Report:
    """Build ``derivations`` and decide every claim at ``dps`` working digits.

    ``sections``, when given, limits the claims decided (and reported) to those
    of these sections (``symseq show`` of one section).

    ``jobs`` > 1 builds and decides the derivations in that many worker
    processes (``symseq verify -j N``; a :class:`~concurrent.futures.ProcessPoolExecutor` with the "spawn"
    start method, one derivation per task, the largest modules first; a page split over several tasks whose
    claims state steps is decided again in one, so that its causes are classified together), each loaded afresh
    in its worker by
    :meth:`~symseq.authoring.Derivation.reloader`. The report is the same as with ``jobs=1``: the same claims
    in the same order, with the same results, records and causes; each derivation then holds its workers'
    sections (:meth:`~symseq.authoring.Derivation.adopt`: claims with their results, without ledgers or
    displays). A derivation not defined in a module, and any run with ``sections``, is decided here.

    ``cache``, a :class:`~symseq.cache.Cache` (``symseq verify`` passes one unless ``--no-cache``), lets a page
    decided in an earlier run with nothing it depends on changed be adopted instead of built (as from a worker:
    claims with their results, without ledgers or displays), and keeps each page decided here for the next run;
    its derivations then hold detached sections too. Without ``sections`` only.

    ``progress``, when given, is called as ``progress(stage, done, total, name)``
    before each derivation is built (stage "building") and each claim is decided
    (stage "checking"), and once more at the end of each stage (``done == total``),
    so a renderer can show a progress bar. With ``jobs`` > 1, "building" counts the derivations as their
    workers finish them.

    Raises:
        SymseqError: for ``jobs`` < 1.
        Whatever loading a derivation raises in a worker (a module that no longer loads), as with ``jobs=1``.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SymseqError(f"jobs is the number of processes that verify derivations, 1 or more (1: in this "
                          f"process); got {jobs!r}")
    derivations = list(derivations)
    tick = progress or (lambda *a: None)
    if sections is not None:
        cache = None
    causes = _adopt_cached(derivations, dps, cache) if cache is not None else {}
    if jobs > 1 and sections is None:
        causes.update(_decide_in_processes(derivations, dps, jobs, tick, cache))
    here = _tasks(derivations)[0] if cache is not None else []  # the pages decided here and kept for the next run
    for i, d in enumerate(derivations):
        tick("building", i, len(derivations), d.name)
        _build(d, cache)
    tick("building", len(derivations), len(derivations), "")
    keep = None if sections is None else {id(x) for x in sections}
    claims = [c for d in derivations for x in d.sections if keep is None or id(x) in keep for c in x.claims]
    for i, c in enumerate(claims):
        tick("checking", i, len(claims), c.derivation)
        c.check(dps)
    tick("checking", len(claims), len(claims), "")
    for group in here:  # kept as detached copies: these derivations keep their ledgers for the renderers
        ds = [d for d, _ in group]
        causes[ds[0].source] = _causes([c for d in ds for c in d.claims], dps)
        _keep(cache, ds, *_detached_page(ds, causes[ds[0].source]), dps)
    report = Report(derivations, claims, dps)
    if causes:  # the pages decided in workers (or in an earlier run) were classified there, with their steps
        report._causes = _merge_causes([causes[page] if page in causes else _causes(cs, dps)
                                        for page, cs in _by_page(claims).items()])
    return report


def _by_page(claims: list) -> dict[str, list]:
    """``claims`` by the page they are printed on (their source), the pages in the order of their first claim."""
    pages: dict[str, list] = {}
    for c in claims:
        pages.setdefault(c.source, []).append(c)
    return pages


def _decide_in_processes(derivations: list, dps: int, jobs: int, tick, cache=None) -> dict:
    """Build and decide, in ``jobs`` worker processes, the derivations that can be loaded again there, one
    derivation per task (the largest modules first), so that the work of a page with several derivations is
    shared out too; each derivation adopts its worker's sections. A page's causes are classified with all its
    claims together: a page split over several tasks whose claims state steps (``s.step``) is decided again, in
    one task. Returns the causes of each page decided so, by page. With a ``cache``, each page decided is kept
    there, with the files its modules read in the workers."""
    groups, tasks = _tasks(derivations)
    if len(tasks) < 2:
        return {}
    decided, causes, steps = {}, {}, {}  # by id(derivation): its sections; by page: its causes
    done = 0
    with contextlib.closing(_results(tasks, dps, jobs)) as results:  # closed (workers ended) on any way out
        for [(d, _)], (sections, page_causes, stated, read) in results:
            tick("building", done, len(derivations), d.name)
            decided[id(d)], causes[d.source], steps[id(d)] = sections, page_causes, stated
            _remember(cache, d, read)
            done += 1
    split = [group for group in groups if len(group) > 1]
    for group in split:
        causes[group[0][0].source] = []  # no step on the page: nothing to classify (:func:`_causes`)
    again = [group for group in split if any(steps[id(d)] for d, _ in group)]
    with contextlib.closing(_results(again, dps, jobs)) as results:  # new processes: modules loaded afresh
        for group, (sections, page_causes, _, _) in results:
            for (d, _), own in zip(group, sections):
                decided[id(d)] = [own]
            causes[group[0][0].source] = page_causes
    for group in groups:
        ds = [d for d, _ in group]
        sections = [decided[id(d)][0] for d in ds]
        _keep(cache, ds, sections, causes[ds[0].source], dps)  # before they are adopted: they name no module
        for d, own in zip(ds, sections):
            d.adopt(own)
    return causes


def _tasks(derivations: list) -> tuple[list, list]:
    """(the pages to decide in workers, each a list of (derivation, reloader); the tasks, one derivation each, the
    largest module first). A page is decided in workers when each of its derivations can be loaded again there
    and none is built yet."""
    pages: dict[str, list] = {}
    for d in derivations:
        pages.setdefault(d.source, []).append((d, d.reloader()))
    groups = [group for group in pages.values()
              if all(reload is not None and getattr(d, "_sections", None) is None for d, reload in group)]
    tasks = sorted(([one] for group in groups for one in group), key=lambda task: -_module_size(task[0][0]))
    return groups, tasks


def _results(tasks: list, dps: int, jobs: int):
    """(task, what :func:`_decide` returned for it) for each task (a list of (derivation, reloader)), in order,
    decided in up to ``jobs`` new worker processes (a worker keeps the modules it loaded, built).

    Ctrl-C stops the run at once: the workers ignore SIGINT (a terminal sends it to every process of the group;
    they start with it blocked, so none dies half started), and this process, on its KeyboardInterrupt (or when its
    caller stops reading), cancels the tasks not started and ends the workers (:func:`_stop`) instead of waiting
    for every task queued. Nothing is written: the report and its JSON are made after the last result."""
    if not tasks:
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context, initializer=_ignore_interrupts)
    try:
        with _interrupts_held():  # the workers are started (at submit) with SIGINT blocked, and inherit that
            futures = [(task, pool.submit(_decide, [reload for _, reload in task], dps)) for task in tasks]
        for task, future in futures:
            names = ", ".join(d.name for d, _ in task)
            try:
                yield task, future.result()
            except BrokenProcessPool as exc:
                raise RuntimeError(f"the worker process verifying {names} ended abruptly (killed, or out of "
                                   f"memory?); run again with -j 1 to verify in one process") from exc
    except BaseException:  # KeyboardInterrupt, GeneratorExit (the caller stopped), an error: no result is wanted
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _ignore_interrupts() -> None:
    """In a worker, before its first task: ignore SIGINT (Ctrl-C is the parent's to act on), then unblock it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextlib.contextmanager
def _interrupts_held():
    """SIGINT blocked in this thread for the duration (a Ctrl-C meanwhile waits, then arrives): what the worker
    processes started meanwhile inherit, until :func:`_ignore_interrupts` ignores it there."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _stop(pool) -> None:
    """Cancel ``pool``'s tasks not started and end its worker processes now, without waiting for the running ones."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:  # pragma: no cover - depends on the Python version
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # before shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(timeout=5)


def _module_size(d) -> int:
    try:
        return os.path.getsize(d.module.__file__)
    except (AttributeError, TypeError, OSError):
        return 0


def _decide(reloads: list, dps: int):
    """In a worker process: load the derivations of one task, build them, decide their claims and classify their
    failures; return (each derivation's detached sections, the causes, whether any claim states a step, the files
    of the author's project each derivation's module read meanwhile), pickled together so that the causes name the
    same claims."""
    from ..cache import project_files, watching

    with watching() as seen:
        ds = [reload() for reload in reloads]
        claims = [c for d in ds for c in d.claims]
    for c in claims:
        c.check(dps)
    causes = _causes(claims, dps)
    steps = any(isinstance(c.quantity, Step) for c in claims)
    read = project_files(seen)
    return [[s.detach() for s in d.sections] for d in ds], causes, steps, read


def _build(d, cache) -> None:
    """Build ``d``'s sections here; with a ``cache``, record the files of the author's project its module reads
    while they are built (:func:`symseq.cache.watching`) in its module's manifest."""
    if cache is None or getattr(d, "_sections", None) is not None:
        d.sections
        return
    from ..cache import watching

    with watching() as seen:
        d.sections
    _remember(cache, d, seen)


def _module_file(d) -> str | None:
    """The file of the module that defines ``d`` (None: a derivation made in a notebook or a test)."""
    return getattr(getattr(d, "module", None), "__file__", None)


def _manifest(cache, d) -> dict | None:
    """The cache's manifest of ``d``'s module (None: not a module file, or nothing recorded that still holds)."""
    file = _module_file(d)
    return cache.manifest(file) if file else None


def _remember(cache, d, read) -> None:
    """Add the files ``read`` while ``d`` was loaded or built to the manifest of ``d``'s module."""
    m = _manifest(cache, d) if cache is not None else None
    if m is not None:
        from ..cache import project_files

        cache.remember(m["file"], m["derivations"], project_files(read, d.module))


def _adopt_cached(derivations: list, dps: int, cache) -> dict:
    """Adopt the decided sections of every page whose derivations the cache holds at ``dps`` digits with nothing
    they depend on changed; returns those pages' causes, by page."""
    causes = {}
    for group in _tasks(derivations)[0]:
        ds = [d for d, _ in group]
        manifests = [_manifest(cache, d) for d in ds]
        if any(m is None for m in manifests):
            continue
        kept = cache.load(cache.page_key(manifests, [d.name for d in ds], dps))
        if not (isinstance(kept, dict) and len(kept.get("sections", ())) == len(ds)):
            continue
        for d, sections in zip(ds, kept["sections"]):
            d.adopt(sections)
        causes[ds[0].source] = kept["causes"]
    return causes


def _detached_page(ds: list, causes: list) -> tuple[list, list]:
    """(each of ``ds``' sections as a detached copy, ``causes`` naming those copies): what a page decided here
    leaves in the cache, while ``ds`` keep their own sections."""
    copies: dict = {}
    sections = [[s.detached(copies) for s in d.sections] for d in ds]

    def named(c):
        return copies.get(id(c), c)

    return sections, [dataclasses.replace(x, claim=named(x.claim), source=named(x.source),
                                          chain=[named(c) for c in x.chain]) for x in causes]


def _keep(cache, ds: list, sections: list, causes: list, dps: int) -> None:
    """Keep one page's decided, detached ``sections`` (one list per derivation of ``ds``) and its ``causes`` in
    the cache, keyed on its modules' manifests; nothing without a cache or a manifest that holds."""
    if cache is None:
        return
    manifests = [_manifest(cache, d) for d in ds]
    if all(m is not None for m in manifests):
        cache.store(cache.page_key(manifests, [d.name for d in ds], dps), {"sections": sections, "causes": causes})


def _causes(claims: list, dps: int) -> list:
    """The causes of one page's failing claims, by its own steps and through their ledgers; none when no claim
    fails, or when the page states no step and every failing claim is a root of its own (nothing to add to the
    failures listed)."""
    causes = classify_claims(claims, dps=dps)
    if not any(isinstance(c.quantity, Step) for c in claims) and all(
            x.kind == "root" and not x.chain for x in causes):
        return []
    return causes


def _merge_causes(per_derivation: list[list]) -> list:
    """The causes of several pages as one list: every root (and drift) first, then the propagated ones."""
    every = [c for causes in per_derivation for c in causes]
    return [c for c in every if c.source is None] + [c for c in every if c.source is not None]
