"""Small ledgers the core tests build for themselves (the bundled derivations are tested on their own)."""

import sympy as sp

from symseq import Ledger, blocks, ops


def two_token_ledger() -> tuple[Ledger, dict]:
    """Week 8 §4 (``000_30e9e4099f2cd2dc.txt``) from ledger operations: the tokens A, B as H = I₂ attend causally
    with W_Q = W_K = W_V = I₂ and scores divided by √2, the residual H' = H + A V, a readout Z = H' W_out with
    W_out = I₂, P = softmax_rows(Z) and the loss −log P_{1,1} (target B at position 1); loss = 0.232674446028972."""
    L = Ledger("two-token context AB, causal head, residual, identity readout")
    H = L.input("H", sp.eye(2))
    W_Q, W_K, W_V, W_out = (L.parameter(n, sp.eye(2)) for n in ("W_Q", "W_K", "W_V", "W_out"))
    S = L.define("S", (H @ W_Q) @ (H @ W_K).T / sp.sqrt(2))
    A = L.define("A", ops.SoftmaxRows(S, blocks.masks.causal(2)))
    Hp = L.define("H'", H + A @ (H @ W_V))
    Z = L.define("Z", Hp @ W_out)
    P = blocks.probabilities(L, Z)
    ce = blocks.cross_entropy(L, Z, targets=[1], positions=[1], name="loss")
    return L, {"A": A, "H'": Hp, "Z": Z, "P": P, "loss": ce.loss}


def scalar_rnn(T: int, *, w_x="0.5", w_h="0.9", w_o="1.1", x="0.1") -> tuple:
    """Week 06's scalar tanh RNN with a final-only loss, T steps: z_t = w_x x_t + w_h h_{t−1}, h_t = tanh(z_t),
    ŷ = w_o h_{T−1}, L = ½(ŷ − y)² with h_{−1} = 0 and y = 1. Returns (ledger, its gradients of L)."""
    L = Ledger()
    w_x, w_h, w_o = L.parameter("w_x", w_x), L.parameter("w_h", w_h), L.parameter("w_o", w_o)
    h = L.input("h_{-1}", 0)
    for t in range(T):
        h = L.define(f"h_{t}", sp.tanh(L.define(f"z_{t}", w_x * L.input(f"x_{t}", x) + w_h * h)))
    L.define("L", (L.define("yhat", w_o * h) - L.input("y", 1)) ** 2 / 2)
    return L, L.backward("L")


def bundled_names() -> list[str]:
    """The names of the bundled derivations, their modules imported but nothing built: the parameter of a test over
    every bundled ledger, which takes the derivation built once per session (the ``built`` fixture)."""
    from symseq.authoring import bundled

    return [d.name for d in bundled()]


def numeric_ledgers(derivation) -> list:
    """Every ledger of ``derivation`` (built now if it is not yet) that has rows and whose leaves all have values."""
    return [L for s in derivation.sections for L in s.ledgers
            if L.rows and all(it.value is not None for it in L.leaves)]


def bundled_numeric_ledgers() -> list:
    """Every numeric ledger (:func:`numeric_ledgers`) of every bundled derivation."""
    from symseq.authoring import bundled

    return [L for d in bundled() for L in numeric_ledgers(d)]


def each_ledger(ledgers: list, check) -> int:
    """Run ``check(L)`` on every ledger, all of them even after a failure; fail naming each ledger whose check
    failed (chained to the first failure), and skip when every check skipped. Returns how many were checked."""
    import pytest

    failed, skipped = [], []
    for L in ledgers:
        try:
            check(L)
        except pytest.skip.Exception as e:
            skipped.append(f"{L.title}: {e.msg}")
        except Exception as e:  # noqa: BLE001 - reported below, with the ledger it came from
            failed.append((L.title, e))
    if failed:
        lines = [f"{title}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}" for title, e in failed]
        raise AssertionError(f"{len(failed)} of {len(ledgers)} ledgers fail:\n" + "\n".join(lines)) from failed[0][1]
    if ledgers and len(skipped) == len(ledgers):
        pytest.skip("; ".join(skipped))
    return len(ledgers) - len(skipped)


def elman_ledger(T=3, head=True):
    """An Elman RNN of T steps (state 3, input 2) with its loss and backward pass: ½‖h_{T−1} W_oᵀ − y‖² (output 2)
    with ``head``, else ½‖h_{T−1}‖²; the ledger, the adjoint map and the names of its loss, error (with the head),
    gradients and ∂L/∂x_0."""
    L = Ledger(f"an Elman RNN, {T} steps" + ("" if head else ", no head"))
    W_x, W_h, b = L.parameter("W_x", shape=(3, 2)), L.parameter("W_h", shape=(3, 3)), L.parameter("b", shape=(1, 3))
    W_o = L.parameter("W_o", shape=(2, 3)) if head else None
    h = L.input("h_{-1}", [[0, 0, 0]])
    for t in range(T):
        h = L.define(f"h_{t}", ops.Map(sp.tanh, L.input(f"x_{t}", shape=(1, 2)) @ W_x.T + h @ W_h.T + b))
    if not head:
        L.define("L", ops.Sum(h * h, None) / 2)
        g = L.backward("L")
        return L, g, ["L", g.name("W_x"), g.name("W_h"), g.name("b"), g.name("x_0")]
    e = L.define("e", h @ W_o.T - L.input("y", shape=(1, 2)))
    L.define("L", ops.Sum(e * e, None) / 2)
    g = L.backward("L")
    return L, g, ["L", "e", g.name("W_x"), g.name("W_h"), g.name("b"), g.name("W_o"), g.name("x_0")]


def benchmark_elman(backend="numpy"):
    """The 16-step Elman RNN of benchmarks/speed.py (d = 64, batch 64, h_{-1} = 0 compiled in), compiled for
    ``backend`` by the benchmark's own setup: (compiled gradient, values, nn.RNN autograd reference, their
    agreement, the benchmark module). Needs torch."""
    import sys
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import backends
    finally:
        sys.path.pop(0)
    T = 16
    inputs = ["W_x", "W_h", "b_h", "W_o"] + [f"x_{t}" for t in range(T)] + ["y"]
    f, vals, ref, err = backends.vector_rnn_setup(T, 64, 64, 8, 64, np.random.default_rng(1), inputs=inputs,
                                                  backend=backend)
    return f, vals, ref, err, backends
