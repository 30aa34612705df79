"""Adding rows, the backward pass and compile() run with the cycle collector paused and leave it as they found it
(issue 15)."""

import gc

import pytest

from small_ledgers import scalar_rnn
from symseq import LedgerError, compile


@pytest.fixture
def collector():
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()


def paused_during(monkeypatch, module, name):
    """Record gc.isenabled() each time ``module.name`` is called inside a pass."""
    seen, inner = [], getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_backward_and_compile_pause_the_collector_and_restore_it(collector, monkeypatch):
    from symseq import ledger as ledger_module
    from symseq.backends import compiled

    gc.enable()
    seen_backward = paused_during(monkeypatch, ledger_module, "local_partials")
    seen_compile = paused_during(monkeypatch, compiled, "plan")
    L, g = scalar_rnn(4)
    assert gc.isenabled()
    compile(L, [g.name("w_x")], backend="numpy")
    assert gc.isenabled()
    assert seen_backward and not any(seen_backward)
    assert seen_compile and not any(seen_compile)


def test_a_disabled_collector_stays_disabled(collector):
    gc.disable()
    L, g = scalar_rnn(4)
    compile(L, [g.name("w_x")], backend="numpy")
    assert not gc.isenabled()


def test_the_collector_is_restored_when_a_pass_raises(collector):
    gc.enable()
    L, g = scalar_rnn(4)
    with pytest.raises(LedgerError):
        compile(L, ["no such row"], backend="numpy")
    with pytest.raises(LedgerError):
        L.backward("no such row")
    assert gc.isenabled()


def test_adding_rows_pauses_the_collector_and_restores_it(collector, monkeypatch):
    from symseq.ledger import Ledger

    seen, register = [], Ledger._register

    def spy(self, item):
        seen.append(gc.isenabled())
        return register(self, item)

    monkeypatch.setattr(Ledger, "_register", spy)
    gc.enable()
    L, g = scalar_rnn(4)  # inputs, parameters and rows, row by row
    assert gc.isenabled()
    assert len(seen) >= 10 and not any(seen)
