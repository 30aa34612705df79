"""numba backend for ledgers with matrix rows: the program on a batch of rows, folded into one matrix, as one
compiled function.

``compile(L, outputs, backend="numba")`` on a ledger with matrix rows (an Elman RNN, h_t = tanh(x_t W_xᵀ +
h_{t−1} W_hᵀ + b)) builds the NumPy backend's program (:mod:`symseq.backends.compiled`, without its writes in
place). The first call with a given set of batched inputs steps through it once with NumPy, noting the shape
of every slot; when a batch of rows folds into one matrix (:meth:`CompiledLedger._fold_plan`, the test the NumPy
program on folded rows passes), the program is written as the Python source of one ``@njit`` function of
two-dimensional arrays, compiled, and run for that call and the later ones with the same inputs batched::

    def program(N, v0, v1, v2, ...):
        v6 = np.ascontiguousarray(v0.T)      # W_xᵀ
        v7 = np.dot(v5, v6)                  # x_0 W_xᵀ for the N rows of the batch: BLAS
        v11 = np.empty((N, 64))
        for i in range(N):                   # a run of element-wise instructions: one loop
            for j in range(64):
                t10 = v7[i, j] + v2[0, j]
                t11 = _tanh(t10)
                v11[i, j] = t11              # kept: a later instruction reads it
        ...
        return (v94, v228, ...)

Matrix products are numba's ``np.dot`` (BLAS, through SciPy, which the ``numba`` extra installs). Each run of
element-wise instructions of one shape, up to the first instruction of another kind that reads one of its
values, is one loop; a value that nothing after the run reads stays a scalar ``t…``. In an Elman RNN's step,
x W_xᵀ + h W_hᵀ + b and its tanh are one pass over the batch instead of three, and (g W_h) ⊙ (1 − h²) with the
bias gradient's running sum one instead of four; the Python between NumPy's calls is gone. tanh is
:func:`~.numba_backend.tanh_f64` (within 2 ulp; the loop vectorises), the other functions those of the
scalar numba backend (:func:`~.numba_backend._code`). A sum over the batch, a row or a column adds in order,
where NumPy adds pairwise along a row: results agree with the NumPy backend to rounding, not bit for bit.

What it compiles: element-wise sums, differences, products, quotients, negations and functions (with a row,
column or 1 × 1 operand broadcast); matrix products; the transpose of a matrix without batch axes; Σ_b a_bᵀ b_b;
sums (not means) over the batch, over rows, over columns or over all entries; Broadcast. Any other instruction
(a softmax, an entry or a slice, a mean) is refused when compiling, with ConventionError naming it; a call whose
batched inputs do not fold (a batch of matrices, or per-example outer products without ``batch_reduce``) is
refused at that call, naming backend='numpy', which computes it. The source is written from the program's own
instruction list, never from text of a document or a user.

Source: numba documentation, "Supported NumPy features" (``np.dot`` on contiguous 2-D arrays, through SciPy's
BLAS); :mod:`symseq.backends.numba_backend` for tanh and the scalar functions.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import ConventionError, LedgerError
from .compiled import CompiledLedger
from .numba_backend import _code, _helpers, import_numba, input_names

# labels of the element-wise instructions that are not scalar expressions (those carry their op: Program.ops)
_ELEMENTWISE = {"Add": "+", "add": "+", "accumulate": "+", "Sub": "-", "Mul": "*", "Div": "/", "Neg": "-",
                "Broadcast": ""}
_OTHER = {"MatMul", "Transpose", "batch_tn", "batch_sum", "Sum"}


@functools.cache
def _sums(numba):
    """Sums of a 2-D array keeping two axes, added in order: over the rows (1 × n), the columns (m × 1), all; and a
    1 × m row repeated as n rows."""
    @numba.njit(cache=False, error_model="numpy")
    def over_rows(a):
        out = np.zeros((1, a.shape[1]))
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[0, j] += a[i, j]
        return out

    @numba.njit(cache=False, error_model="numpy")
    def over_columns(a):
        out = np.zeros((a.shape[0], 1))
        for i in range(a.shape[0]):
            s = 0.0
            for j in range(a.shape[1]):
                s += a[i, j]
            out[i, 0] = s
        return out

    @numba.njit(cache=False, error_model="numpy")
    def over_all(a):
        out = np.zeros((1, 1))
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[0, 0] += a[i, j]
        return out

    @numba.njit(cache=False, error_model="numpy")
    def repeat_row(a, n):  # a 1 × m row as n equal rows (what NumPy's broadcasting of it reads)
        out = np.empty((n, a.shape[1]))
        for i in range(n):
            out[i, :] = a[0, :]
        return out

    return {"_over_rows": over_rows, "_over_columns": over_columns, "_over_all": over_all,
            "_repeat_row": repeat_row}


class NumbaMatrixLedger(CompiledLedger):
    """A compiled ledger with matrix rows run as one numba function on folded rows (see the module docstring);
    called like any :class:`CompiledLedger`.

    ``numba_source(batched)``: the source written for the inputs named in ``batched`` having batch axes, once a
    call with them batched has been made.
    """

    def __init__(self, ledger, program, kernel, outputs, batch_reduce):
        super().__init__(ledger, program, kernel, outputs, batch_reduce)
        self.numba = import_numba()
        self._scope = {"np": np, **_sums(self.numba)}  # the element-wise loops have theirs (_compiled_loop)
        self._functions: dict = {}  # frozenset of batched input names -> (function, argument slots, outputs, source)
        for out, fn, args, label in program.instructions:  # refuse now, not at the first call
            if out in program.ops:
                _code(program.ops[out], [f"v{a}" for a in args], label)
            elif label not in _ELEMENTWISE and label not in _OTHER:
                raise ConventionError(f"the numba backend does not compile {label} (in a ledger with matrix rows it "
                                      f"compiles element-wise arithmetic and functions, matrix products, transposes "
                                      f"and sums); use backend='numpy' for this ledger")
            elif label == "Sum" and program.sums[out].mean:
                raise ConventionError("the numba backend does not compile a mean (Sum with mean=True); use "
                                      "backend='numpy' for this ledger")

    def numba_source(self, batched=()) -> str:
        """The source of the function run when the inputs named in ``batched`` come with batch axes.

        Raises:
            LedgerError: no call with exactly those inputs batched has been made (the source is written from the
                shapes that call notes), or ``batched`` is not a list of the program's input names.
        """
        hit = self._functions.get(input_names(self, batched))
        if hit is None:
            raise LedgerError(f"no call with {', '.join(sorted(batched)) or 'no input'} batched has been made; "
                              f"the source is written on the first such call")
        return hit[3]

    def _run(self, slots: list, batch: dict) -> list:
        key = frozenset(batch)
        hit = self._functions.get(key)
        if hit is None:
            shapes: dict = {}
            self._step_through(list(slots), shapes)  # with NumPy, once: the shape of every slot
            hit = self._functions[key] = self._function(shapes, batch)
        fn, ins, outs, _ = hit
        lead = next(iter(batch.values())) if batch else ()
        results = fn(math.prod(lead), *[_argument(slots[s]) if a is None else a for s, a in ins])
        out = list(slots)
        for (s, batched), v in zip(outs, results):
            out[s] = v.reshape(tuple(lead) + (1, v.shape[-1])) if batched else v
        return out

    def _function(self, shapes: dict, batch: dict):
        """(the compiled function, (argument slot, its value when it is a constant) pairs, (output slot, batched)
        pairs, its source) for calls with the inputs of ``batch`` batched; ``shapes``: every slot's shape in such
        a call.

        Raises:
            ConventionError: the batch does not fold into one matrix (names the batched inputs).
        """
        p = self.program
        batched, kinds, why = self._fold_plan(shapes)
        if kinds is None:
            raise ConventionError(f"the numba backend runs a ledger with matrix rows on a batch of rows folded into "
                                  f"one matrix; with {', '.join(sorted(batch))} batched, {why} (a per-example "
                                  f"weight gradient is one without batch_reduce): use backend='numpy'")
        src, ins, outs, loops = _write(p, shapes, batched, kinds)
        scope = dict(self._scope)
        code = compile(src, f"<symseq numba program of {self.ledger.title or 'a ledger'}>", "exec")
        exec(code, scope)  # our own instruction list as source (see the module docstring), no user text
        scope.update((name, _compiled_loop(source)) for source, name in loops.items())
        fn = self.numba.njit(cache=False, error_model="numpy", fastmath=False, boundscheck=False)(scope["program"])
        ins = [(s, _argument(p.constants[s]) if s in p.constants else None) for s in ins]  # constants: once
        return fn, ins, [(s, s in batched) for s in outs], src


def _argument(v):
    """A value as the compiled function reads it: a batch of rows as one C-contiguous (N, n) array (a view when it
    is one already), a matrix C-contiguous, a number as a float."""
    if type(v) is np.ndarray and v.ndim >= 2:
        v = v.reshape(-1, v.shape[-1]) if v.ndim > 2 else v
        return v if v.flags.c_contiguous else np.ascontiguousarray(v)
    return float(v)


def _write(p, shapes: dict, batched: set, kinds: list) -> tuple[str, list, list, dict]:
    """The source of ``program(N, v…)`` (the module docstring) for the program ``p`` on folded rows, after the
    loop functions it calls; its argument slots (the inputs and constants it reads, in order), the slots it
    returns, and the loop functions (source -> name)."""
    def shape(s):  # on folded rows: a batch of rows is N × n
        sh = shapes[s]
        if sh is None or len(sh) < 2:
            return ()
        return ("N", sh[-1]) if s in batched else tuple(sh)

    written = [out for out, _, _, _ in p.instructions]
    read = sorted({a for _, _, args, _ in p.instructions for a in args} - set(written))
    outs = [s for s in dict.fromkeys(p.outputs.values()) if s in set(written)]
    users: dict = {}
    for i, (_, _, args, _) in enumerate(p.instructions):
        for a in args:
            users.setdefault(a, set()).add(i)
    lines = [f"def program(N, {', '.join(f'v{a}' for a in read)}):" if read else "def program(N):"]
    run: list = []  # the pending run of element-wise instructions: [(index, out, args, label)]
    loops: dict = {}  # source of a loop function -> its name in the program

    def flush():
        """The pending run as a call of a loop function (:func:`_loop_source`), which reads its operands and
        returns the values read after it."""
        if not run:
            return
        rows, cols = shape(run[0][1])
        indices = {i for i, _, _, _ in run}
        members = {out: f"t{k}" for k, (_, out, _, _) in enumerate(run)}
        kept = [out for i, out, _, _ in run if out in outs or users.get(out, set()) - indices]
        operands = list(dict.fromkeys(a for _, _, args, _ in run for a in args if a not in members))
        names = members | {a: _entry(f"a{k}", shape(a)) for k, a in enumerate(operands)}
        body = [(members[out], _code_of(p, out, [names[a] for a in args], label)) for _, out, args, label in run]
        source = _loop_source(rows, cols, len(operands), body, [members[out] for out in kept])
        name = loops.setdefault(source, f"_loop{len(loops)}")
        lines.append(f"    {''.join(f'v{s}, ' for s in kept)}= {name}(N, {', '.join(f'v{a}' for a in operands)})")
        run.clear()

    for i, ((out, fn, args, label), kind) in enumerate(zip(p.instructions, kinds)):
        if out in p.ops or label in _ELEMENTWISE:
            if run and shape(run[0][1]) != shape(out):
                flush()
            run.append((i, out, args, label))
            continue
        members = {o for _, o, _, _ in run}
        if members & set(args):
            flush()
        a = [f"v{x}" for x in args]
        if label == "MatMul":
            line = f"np.dot({a[0]}, {a[1]})"
        elif label == "Transpose":
            line = f"np.ascontiguousarray({a[0]}.T)"
        elif kind == "Σ aᵀb, a shared":  # the shared row repeated for every example, then one product
            line = f"np.dot(_repeat_row({a[0]}, {a[1]}.shape[0]).T, {a[1]})"
        elif kind == "Σ aᵀb, b shared":
            line = f"np.dot({a[0]}.T, _repeat_row({a[1]}, {a[0]}.shape[0]))"
        elif label == "batch_tn":
            line = f"np.dot({a[0]}.T, {a[1]})"
        elif label == "batch_sum":
            line = f"_over_rows({a[0]})" if kind == "batch sum" else a[0]
        else:  # Sum: over a row's entries when the rows are folded (the last axis), else as its axis says
            axis = 1 if kind == "row sum" else p.sums[out].axis
            line = f"{ {None: '_over_all', 0: '_over_rows', 1: '_over_columns'}[axis]}({a[0]})"
        lines.append(f"    v{out} = {line}")
    flush()
    lines.append(f"    return ({''.join(f'v{s}, ' for s in outs)})")
    head = [source.replace("def loop(", f"def {name}(", 1) for source, name in loops.items()]
    return "\n".join(head + lines) + "\n", read, outs, loops


@functools.cache
def _compiled_loop(source: str):
    """The loop function of ``source`` (:func:`_loop_source`) compiled by numba; once per process, shared by every
    program with a run of the same instructions on operands of the same shapes."""
    numba = import_numba()
    scope = {"np": np, "math": math, **_helpers(numba)}
    exec(compile(source, "<symseq numba loop>", "exec"), scope)  # written from an instruction list, no user text
    return numba.njit(cache=False, error_model="numpy", fastmath=False, boundscheck=False)(scope["loop"])


def _code_of(p, out, operands: list, label: str) -> str:
    """One entry of the element-wise instruction writing ``out``, over the ``operands``' entries (their code)."""
    if out in p.ops:
        return _code(p.ops[out], operands, label)
    if label in ("Neg", "Broadcast"):
        return f"{_ELEMENTWISE[label]}{operands[0]}"
    return f" {_ELEMENTWISE[label]} ".join(operands)


def _entry(name: str, shape) -> str:
    """The entry (i, j) of the operand ``name`` of ``shape`` in a loop over a larger shape: a row, a column or a
    1 × 1 operand broadcast, a number as it is."""
    return name if shape == () else f"{name}[{'0' if shape[0] == 1 else 'i'}, {'0' if shape[1] == 1 else 'j'}]"


def _loop_source(rows, cols, n: int, body: list, kept: list) -> str:
    """A function ``loop(N, a0, …, a{n−1})`` of one run of element-wise instructions: a loop over the rows and
    columns of its shape computing ``body`` [(temporary, its code)] per entry, returning the ``kept`` temporaries
    as arrays. Its operands and temporaries are named by position (a0, a1, …; t0, t1, …), so that the runs of
    every step of a recurrence are one function, compiled once: a loop in a function of its own is optimised on
    its own (tanh inlined, the loop vectorised), which in one function of hundreds of loops LLVM stops doing."""
    out = {t: f"o{k}" for k, t in enumerate(kept)}
    lines = [f"def loop(N, {', '.join(f'a{k}' for k in range(n))}):"]
    lines += [f"    {out[t]} = np.empty(({rows}, {cols}))" for t in kept]
    lines += [f"    for i in range({rows}):", f"        for j in range({cols}):"]
    lines += [f"            {t} = {code}" for t, code in body]
    lines += [f"            {out[t]}[i, j] = {t}" for t in kept]
    lines.append(f"    return ({''.join(f'{out[t]}, ' for t in kept)})")
    return "\n".join(lines) + "\n"
