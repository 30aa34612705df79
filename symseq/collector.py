"""Passes over a whole ledger run without CPython's cycle collector, so their cost stays linear in the rows.

A pass such as :meth:`symseq.ledger.Ledger.backward` or :func:`symseq.compile` allocates tens of container objects
per row (nodes, SymPy expressions, program instructions) and keeps most of them. CPython's cycle collector runs a
full collection, which visits every tracked object in the process, each time the long-lived objects have grown by a
quarter: eight visits of the whole heap over ``backward`` and ``compile`` of the T = 10⁴ tanh RNN of
``benchmarks/speed.py`` (state 4, 0.95 million tracked objects at the end), and the cost of a visit per object rises
as the heap outgrows the CPU caches. The collector took 27 % of that ``compile`` at T = 256 and 34-40 % at T = 4096
and 10⁴ (timed with ``gc.callbacks``), which made derive + compile grow as T^1.12 over T = 256 … 10⁴.

Adding a row (:meth:`~symseq.ledger.Ledger.define`, and an input or parameter) is paused the same way: a loop
that builds a long ledger row by row otherwise pays the same full collections (T = 10⁴, state 4: 0.74–0.78 s of
building, 0.34 s paused; T = 1024: 0.036–0.060 s, 0.040–0.048 s paused).

:func:`without_cycle_collection` pauses the collector for the duration of one pass and, on the way out, collects the
youngest generation once: the objects the pass allocated, visited once (linear in the rows), so that the reference
cycles SymPy leaves behind (``Lambda``'s nested signature checkers, a few per row) are freed as before. The
collector is restored to the state it was found in; nested passes leave it paused until the outermost one returns.
"""

from __future__ import annotations

import functools
import gc


def without_cycle_collection(pass_):
    """``pass_`` (a function) run with the cycle collector paused, then its youngest generation collected once.

    Results are those of ``pass_`` unchanged: only when unreachable reference cycles are freed differs. Nothing
    is done when the collector was already disabled (by the caller, or by an enclosing pass).
    """

    @functools.wraps(pass_)
    def run(*args, **kwargs):
        if not gc.isenabled():
            return pass_(*args, **kwargs)
        gc.disable()
        try:
            return pass_(*args, **kwargs)
        finally:
            gc.enable()
            gc.collect(0)

    return run
