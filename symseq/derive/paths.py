"""Gradient paths: how |∂h_{T−1}/∂h_0| grows or shrinks with the path length (Week 06, Figure 3).

Handout 004 (Week 06), section "Controlled experiments separate path length
from saturation", Figure 3: the left panel raises fixed transition factors to
the number of transitions; the right panel follows the sensitivity of the last
state to the first along real tanh trajectories with constant inputs. Both are
computed here by symbolic reverse mode over the scalar recurrence
z_t = w_x x_t + w_h h_{t−1}, h_t = φ(z_t), evaluated with mpmath.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy as sp

from ..errors import ConventionError

GRADIENT_PATH_KEYS = ("w_h", "w_x", "h_init", "inputs", "factors", "length")


@dataclass
class PathCurves:
    """The curves of a gradient-path figure: path lengths and |∂h_{T−1}/∂h_0| per case (mpf)."""

    lengths: list  # T = 1, 2, ..., length
    fixed: dict  # label of the factor → list of |factor|^(T−1)
    trajectories: dict  # label of the input → list of |∂h_{T−1}/∂h_0|
    params: dict


def path_sensitivities(*, w_h, w_x=0, x=0, h_init=0, length: int = 30, activation=sp.tanh,
                       dps: int = 30) -> list:
    """|∂h_{T−1}/∂h_0| for T = 1 … ``length`` along one scalar trajectory, by reverse mode over a ledger.

    The ledger is the scalar recurrence of Week 06 (handout 004, §"Controlled
    experiments"): z_t = w_x x_t + w_h h_{t−1}, h_t = φ(z_t), with constant
    input x_t = ``x`` and h_{−1} = ``h_init``; ``activation=None`` makes φ the
    identity, so the transition factor is the fixed number w_h. For each T the
    ledger is differentiated from the row h_{T−1} (symbolic reverse mode,
    :meth:`~symseq.ledger.Ledger.backward`) and the adjoint of h_0 is
    evaluated with mpmath at ``dps`` digits. At T = 1 there is no transition
    and the sensitivity is 1.

    Args:
        w_h, w_x, x, h_init: exact numbers (decimal strings such as ``"1.2"``,
            ints, SymPy rationals); floats are refused.
        length: the longest sequence, T_max ≥ 1.

    Returns:
        a list of ``length`` mpf values.

    Raises:
        ConventionError: for a float parameter or ``length`` < 1.
    """
    from ..backends import evaluate
    from ..ledger import Ledger

    if int(length) < 1:
        raise ConventionError(f"a gradient path needs length ≥ 1; got {length}")
    L = Ledger("scalar recurrence with constant input")
    wh = L.parameter("w_h", w_h)
    wx = L.parameter("w_x", w_x)
    h = L.input("h_{-1}", h_init)
    hs = []
    for t in range(int(length)):
        xt = L.input(f"x_{t}", x)
        z = L.define(f"z_{t}", wx * xt + wh * h)
        h = L.define(f"h_{t}", activation(z) if activation is not None else z)
        hs.append(f"h_{t}")
    targets = []
    for T in range(2, int(length) + 1):
        g = L.backward(f"h_{T - 1}", wrt=[], names=lambda n, T=T: f"∂h_{{{T - 1}}}/∂{n}")
        targets.append(g.name("h_0"))
    values = evaluate(L, "mpmath", dps=dps, targets=targets) if targets else {}
    with mpmath.workdps(dps):  # mpf arithmetic rounds to the current precision
        return [mpmath.mpf(1)] + [abs(values[t]) for t in targets]


def gradient_path_curves(*, w_h="1.2", w_x=1, h_init=0, inputs=(0, 1), factors=("0.8", 1, "1.2"),
                         length: int = 30) -> PathCurves:
    """Both panels of a gradient-path figure, computed from ledgers by :func:`path_sensitivities`.

    Left: for each fixed factor f, |f|^(T−1) (an identity activation with w_h = f).
    Right: for each constant input x, |∂h_{T−1}/∂h_0| along the tanh trajectory
    with the given w_h, w_x and h_{−1}.
    """
    fixed = {str(f): path_sensitivities(w_h=f, length=length, activation=None) for f in factors}
    traj = {str(x): path_sensitivities(w_h=w_h, w_x=w_x, x=x, h_init=h_init, length=length) for x in inputs}
    return PathCurves(list(range(1, int(length) + 1)), fixed, traj,
                      {"w_h": str(w_h), "w_x": str(w_x), "h_init": str(h_init), "length": int(length)})
