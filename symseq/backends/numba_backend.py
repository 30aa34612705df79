"""numba backend: a compiled ledger of scalar rows as one machine-code loop over the batch.

``compile(L, outputs, backend="numba")`` builds the same straight-line program
as the NumPy backend (:mod:`symseq.backends.compiled`: rows shared, exact 0 and
1 folded), then writes it as the Python source of one ``@njit`` function::

    def program(n, a0, a1, ..., o0, o1, ...):
        r0 = 0.0                       # a gradient summed over the batch (batch_reduce)
        for i in range(n):
            v5 = a0 * a4[i]            # an input with a batch axis is read at i, a parameter as is
            v6 = np.tanh(v5)
            ...
            o0[i] = v17                # an output per example
            r0 += v27
        return (r0,)

so every intermediate of an example stays in registers: one pass over the
batch instead of one array pass per instruction. The source is generated from
the program's own instruction list — the op of each instruction
(``compiled._op``: add, sub, mul, a power with an integer or ±½ exponent, a
named function) and float constants written with ``repr`` — never from text of
a document or a user, and it is compiled by numba, not ``exec``-ed as Python
on data. ``f.numba_source(pattern)`` shows it.

Exact to float64 (IEEE double; no fast-math, so the order of operations is the
program's): results agree with the NumPy and torch backends to rounding
(tanh, exp and log come from the C math library instead of NumPy's vector
routines, a difference of an ulp or so). Division by zero gives ±inf or nan
as in NumPy (``error_model="numpy"``), which the output check then reports with
the row at fault, as for the other backends.

What it accepts: ledgers whose needed rows and leaves are all scalars, with
the elementary functions of :mod:`symseq.functions` that have one argument
(tanh, exp, log, sigmoid, relu, Heaviside, sin, cos, sinh, cosh, tan, abs, erf,
sqrt and integer powers) and Max/Min. A matrix row, or softmax/logsumexp of
scalars, raises :class:`~symseq.errors.ConventionError` naming it (use
``backend="numpy"``). numba is an optional extra (``pip install
'symseq[numba]'``); without it :class:`~symseq.errors.BackendUnavailable` says
so.

Source: numba documentation, "Compiling Python code with @jit" and
"Supported Python features" (``math`` and NumPy ufuncs on scalars,
``error_model``).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..errors import BackendUnavailable, ConventionError
from .compiled import CompiledLedger, _Compiler, requested

# name of the function in symseq.functions / SymPy -> its float64 code (a format with {0}, {1} for arguments)
_CALLS = {
    "tanh": "np.tanh({0})", "exp": "np.exp({0})", "log": "_log({0})", "sinh": "np.sinh({0})",
    "cosh": "np.cosh({0})", "sin": "np.sin({0})", "cos": "np.cos({0})", "tan": "np.tan({0})",
    "abs": "abs({0})", "erf": "math.erf({0})", "sigmoid": "_sigmoid({0})", "relu": "max({0}, 0.0)",
    "heaviside": "_heaviside({0}, {1})",
}


def import_numba():
    """Import numba or raise a clear error naming the extra to install."""
    try:
        import numba
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise BackendUnavailable(
            "the numba backend needs numba, which is not installed: pip install 'symseq[numba]' "
            "(or pip install numba); backend='numpy' computes the same program without it"
        ) from exc
    return numba


def _helpers(numba):
    @numba.njit(cache=False, error_model="numpy")
    def _sigmoid(x):  # as the NumPy backend: e^{-|x|} never overflows
        e = np.exp(-abs(x))
        return 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)

    @numba.njit(cache=False, error_model="numpy")
    def _heaviside(x, h0):
        return 1.0 if x > 0 else (0.0 if x < 0 else h0)

    @numba.njit(cache=False, error_model="numpy")
    def _log(x):  # log 0 = −inf (as np.log); a negative argument gives nan, which the output check reports
        return -np.inf if x == 0 else np.log(x)

    return {"_sigmoid": _sigmoid, "_heaviside": _heaviside, "_log": _log}


def _literal(value) -> str:
    v = float(np.asarray(value, dtype=np.float64).reshape(-1)[0])
    if math.isnan(v):
        return "np.nan"
    if math.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _code(op, args: list[str], label: str) -> str:
    kind = op[0]
    if kind == "add":
        return " + ".join(args)
    if kind == "sub":
        return f"{args[0]} - {args[1]}"
    if kind == "neg":
        return f"-{args[0]}"
    if kind == "mul":
        return " * ".join(args)
    if kind == "signed":
        out = args[0] if op[1][0] else f"-{args[0]}"
        for a, positive in zip(args[1:], op[1][1:]):
            out += f" + {a}" if positive else f" - {a}"
        return out
    if kind == "pow":
        n = op[1]
        if n == sp.S.Half:
            return f"np.sqrt({args[0]})"
        if n == -sp.S.Half:
            return f"1.0 / np.sqrt({args[0]})"
        n = int(n)
        if n == 2:
            return f"{args[0]} * {args[0]}"
        if n == -1:
            return f"1.0 / {args[0]}"
        return f"{args[0]} ** {n}"
    if kind == "powx":
        return f"{args[0]} ** {args[1]}"
    if kind == "call":
        name = op[1]
        if name in ("max", "min"):
            out = args[0]
            for a in args[1:]:
                out = f"{name}({out}, {a})"
            return out
        if name in _CALLS:
            return _CALLS[name].format(*args)
    raise ConventionError(f"the numba backend does not compile {label}(…) ({kind} {op[1:]}); "
                          f"use backend='numpy' for this ledger")


class NumbaLedger(CompiledLedger):
    """A compiled ledger run as one numba loop over the batch; called like any :class:`CompiledLedger`.

    ``numba_source(batched)`` is the generated source for the inputs named in ``batched`` having a batch axis.
    """

    def __init__(self, ledger, program, kernel, outputs, batch_reduce):
        super().__init__(ledger, program, kernel, outputs, batch_reduce)
        self.numba = import_numba()
        self._helpers = _helpers(self.numba)
        self._compiled: dict = {}  # frozenset of batched input slots -> (njit function, input slots, outputs)
        for i, (out, fn, args, label) in enumerate(program.instructions):  # refuse now, not at the first call
            if out not in program.ops:
                raise ConventionError(f"the numba backend compiles scalar instructions only; {label} is not one: "
                                      f"use backend='numpy'")
            _code(program.ops[out], [f"v{a}" for a in args], label)

    def numba_source(self, batched=()) -> str:
        """The Python source of the loop when the inputs named in ``batched`` come with a batch axis."""
        return self._source(frozenset(self.program.inputs[n] for n in batched))[0]

    def _source(self, batched: frozenset):
        p = self.program
        ins = sorted(p.inputs.values())
        reduced = self._reduced_slots()
        per_example = [s for s in dict.fromkeys(p.outputs.values()) if s not in reduced]
        per_example_out = [s for s in per_example if s not in p.inputs.values() and s not in p.constants]
        head = [f"a{s}" for s in ins] + [f"o{s}" for s in per_example_out]
        lines = [f"def program(n, {', '.join(head)}):"]
        red = [s for s in dict.fromkeys(p.outputs.values()) if s in reduced]
        for s in red:
            lines.append(f"    r{s} = 0.0")
        for s in ins:
            if s not in batched:
                lines.append(f"    v{s} = a{s}")
        for s, c in p.constants.items():
            lines.append(f"    v{s} = {_literal(c)}")
        lines.append("    for i in range(n):")
        for s in ins:
            if s in batched:
                lines.append(f"        v{s} = a{s}[i]")
        for out, fn, args, label in p.instructions:
            lines.append(f"        v{out} = {_code(p.ops[out], [f'v{a}' for a in args], label)}")
        for s in per_example_out:
            lines.append(f"        o{s}[i] = v{s}")
        for s in red:
            lines.append(f"        r{s} += v{s}")
        lines.append(f"    return ({''.join(f'r{s}, ' for s in red)})")
        return "\n".join(lines) + "\n", ins, per_example_out, red

    def _reduced_slots(self) -> set:
        if not self.batch_reduce:
            return set()
        L = self.ledger
        return {s for n, s in self.program.outputs.items()
                if L[n].kind == "adjoint" and L[L[n].adjoint_of].kind == "parameter"}

    def _function(self, batched: frozenset):
        hit = self._compiled.get(batched)
        if hit is None:
            src, ins, outs, red = self._source(batched)
            scope = {"np": np, "math": math, **self._helpers}
            code = compile(src, f"<symseq numba program of {self.ledger.title or 'a ledger'}>", "exec")
            exec(code, scope)  # our own instruction list as source (see the module docstring), no user text
            fn = self.numba.njit(error_model="numpy", fastmath=False)(scope["program"])
            hit = self._compiled[batched] = (fn, ins, outs, red)
        return hit

    def _run(self, slots: list, leaves: dict, batch: dict) -> list:
        p = self.program
        lead = next(iter(batch.values())) if batch else ()
        n = int(np.prod(lead)) if lead else 1
        batched = frozenset(s for name, s in p.inputs.items() if name in batch)
        fn, ins, outs, red = self._function(batched)
        args = []
        for s in ins:
            v = np.asarray(slots[s], dtype=np.float64)
            args.append(np.ascontiguousarray(v).reshape(-1) if s in batched else float(v.reshape(-1)[0]))
        bufs = [np.empty(n) for _ in outs]
        sums = fn(n, *args, *bufs)
        out = list(slots)
        for s, b in zip(outs, bufs):
            out[s] = b.reshape(tuple(lead) + (1, 1))
        for s, r in zip(red, sums):
            out[s] = np.full((1, 1), r)
        for s in p.outputs.values():
            if s in p.constants or s in p.inputs.values():
                out[s] = slots[s]
        return out


def compile_numba(ledger, outputs, *, inputs=None, device=None, dtype=None, batch_reduce=None) -> NumbaLedger:
    """Compile the rows needed for ``outputs`` into one numba loop over the batch (see the module docstring).

    Args:
        ledger: a :class:`~symseq.ledger.Ledger` whose needed rows and leaves are scalars (shape ``()``).
        outputs: row or adjoint names to return; each comes back with the batch's leading shape (or as a float
            when no input has a batch axis), a parameter's gradient summed (``batch_reduce="sum"``) or averaged
            (``"mean"``) over the batch.
        inputs: leaves that may be given at call time (default all); the others are compiled in.

    Raises:
        ConventionError: a row or leaf that is not a scalar, a function the backend does not compile, or a
            device or dtype other than the CPU and float64 (names what was given).
        BackendUnavailable: numba is not installed.
        LedgerError: an output or input that is not in the ledger.
    """
    from .numpy_backend import NumpyKernel

    import_numba()
    if device not in (None, "cpu"):
        raise ConventionError(f"the numba backend runs on the CPU; got device={device!r} (use backend='torch')")
    if dtype not in (None, np.float64, "float64"):
        raise ConventionError(f"the numba backend computes in float64; got dtype={dtype!r} (leave dtype unset)")
    outputs, inputs = requested(ledger, outputs, inputs)
    for n in ledger.needed(outputs):
        if ledger[n].shape != ():
            raise ConventionError(f"the numba backend compiles scalar rows only; {n} has shape {ledger[n].shape}: "
                                  f"use backend='numpy' (or 'torch') for a ledger with matrix rows")
    k = NumpyKernel(np.float64)
    program = _Compiler(ledger, k, inputs, straight=True).build(outputs)
    return NumbaLedger(ledger, program, k, outputs, batch_reduce)
