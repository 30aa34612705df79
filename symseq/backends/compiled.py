"""Compile a ledger into one straight-line program for NumPy, mpmath or torch.

The ledger's rows are already common subexpressions, so compiling is a single
pass: each row, and each node of its tree, becomes one instruction that
calls the backend's kernel (the same array code the interpreter uses, so the
two cannot disagree on a convention). The program grows linearly with the
number of rows, which grows linearly with T; nothing is expanded.

    >>> import numpy as np, sympy as sp
    >>> from symseq import Ledger, compile
    >>> L = Ledger("one tanh step")
    >>> x, w = L.input("x", sp.Rational(1, 2)), L.parameter("w", 2)
    >>> h = L.define("h", sp.tanh(w * x))
    >>> g = L.backward("h")
    >>> f = compile(L, ["h", g.name("w")], backend="numpy")
    >>> out = f(x=np.array([0.5, 1.0]))      # leading batch axes broadcast
    >>> out["h"].round(6), out["∂h/∂w"].round(6)
    (array([0.761594, 0.964028]), array([0.209987, 0.070651]))

``f.source`` is the program, one line per instruction.

For the ``numpy``, ``mpmath`` and ``torch`` backends the program is a list of
(output slot, function, input slots) built from the ledger's own node objects.
The first calls step through it; once they have cost as much as writing it out
would, it runs as one straight-line Python function written from that list
(``s7 = s5 * s6``, ``s8 = f3(s7)``: slot numbers, Python's arithmetic operators
and the positions of the instructions, whose functions are passed in a
namespace), which costs a fraction of the stepping per instruction. ``backend="numba"``
(:mod:`symseq.backends.numba_backend`) writes the Python source of one loop over
the batch from the same list and compiles it with numba. Neither ever contains
text of a document or a user.

What keeps the program lean:

- a subexpression that equals an earlier row (tanh(z_t) in an adjoint row, when
  h_t := tanh(z_t) is a row) reads that row instead of recomputing it, and a
  scalar subexpression computed for one row (ŷ − y in the loss and in its
  adjoint) is computed once for all rows;
- a leaf compiled in as a constant (not in ``inputs``, so the caller cannot
  pass it) whose exact value is 0 or 1 folds: w_h·h₋₁ with h₋₁ = 0 is not
  computed; a leaf the caller may pass always keeps its slot;
- constants are converted once;
- (NumPy) an element-wise instruction whose argument is a temporary array that
  nothing reads afterwards writes into it (``out=``), so a chain such as
  (1 − h²)·g makes one array, not three, and so do x_t W_xᵀ + h_{t−1} W_hᵀ + b,
  a weight's running gradient sum Σ_t g_tᵀ x_t and S/√d_k; the batch sum of a
  product of two scalar rows (Σ_b h_{t−1} g_t in a shared weight's gradient)
  is one dot product; matrix rows stay BLAS calls;
- (NumPy, torch) an element-wise sum, product or quotient reads an operand
  Broadcast(y) as y and lets the array library broadcast it, and x + (−y) is
  x − y: the softmax adjoint A ⊙ (Ḡ − Broadcast(Σ_j Ḡ ⊙ A)) makes no
  (…, m, n) copy of its row sums; a row softmax is computed in the array of
  its argument when nothing reads that afterwards (S/√d_k + M in attention),
  with e^{−∞} = 0 set where the mask excludes a source, not computed;
  a block of consecutive columns (a head's) is a view, not a copy.

The compiled program agrees with the row-by-row interpreter to 1e-13 on every
bundled ledger, and the writes in place and the last item change no bit of it
(``tests/test_compiled_parity.py``).
"""

from __future__ import annotations

import builtins
import functools
import operator
import time
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import sympy as sp

from .. import ops
from ..collector import without_cycle_collection
from ..errors import ConventionError, EvaluationError, LedgerError, ShapeError
from ..ledger import warn_indistinct, where_text
from .numpy_backend import _softmax
from .scalar import plan, square as _square


@dataclass
class Program:
    """A straight-line program: ``slots[out] = fn(*slots[args])`` for each instruction in order."""

    instructions: list = field(default_factory=list)  # (out, fn, args, label)
    frees: list = field(default_factory=list)  # per instruction: slots whose last use it is
    n_slots: int = 0
    constants: dict = field(default_factory=dict)  # slot -> value
    inputs: dict = field(default_factory=dict)  # leaf name -> slot
    outputs: dict = field(default_factory=dict)  # name -> slot
    ops: dict = field(default_factory=dict)  # slot -> what its scalar instruction computes (see _op)
    in_place: dict = field(default_factory=dict)  # instruction index -> the argument slot it writes its result into
    in_place_ufunc: dict = field(default_factory=dict)  # instruction index -> the ufunc it writes in place with
    sums: dict = field(default_factory=dict)  # slot of a Sum instruction -> the ops.Sum node (axis, mean, count)

    def new_slot(self) -> int:
        self.n_slots += 1
        return self.n_slots - 1


class CompiledLedger:
    """A compiled ledger: call it with leaf values (by name) to get the requested rows and adjoints.

    Attributes:
        source: a readable listing of the program (one instruction per line).
        names: the requested output names.
    """

    def __init__(self, ledger, program: Program, kernel, outputs: list[str], batch_reduce: str | None):
        self.ledger = ledger
        self.program = program
        self.kernel = kernel
        self.names = list(outputs)
        self.batch_reduce = batch_reduce
        self._defaults: dict = {}  # leaf name -> its exact value converted by the kernel
        self._program_fn = None  # the program written out as straight-line Python (see _run), once made
        self._folded: dict = {}  # frozenset of batched input names -> the program on folded rows, or None (_fold_rows)
        self._stepped_seconds = 0.0  # time spent stepping through the instruction list so far
        self._leaves = [(name, s, ledger[name]) for name, s in program.inputs.items()]  # read at every call
        self._outputs = [(name, s, ledger[name]) for name, s in program.outputs.items()]
        self._slots = [None] * program.n_slots  # a call's slots before the leaves are read: the constants
        for s, v in program.constants.items():
            self._slots[s] = v
        self._arrays = kernel.arrays  # values with batch axes, released after their last use
        self._folds = getattr(kernel, "folds_rows", False)  # a batch of rows may run as one matrix (_fold_rows)

    def __len__(self) -> int:
        return len(self.program.instructions)

    @property
    def source(self) -> str:
        p = self.program
        lines = [f"# inputs: {', '.join(f's{v} = {k}' for k, v in p.inputs.items())}"]
        for i, (out, fn, args, label) in enumerate(p.instructions):
            into = f"  # in place of s{p.in_place[i]}" if i in p.in_place else ""
            lines.append(f"s{out} = {label}({', '.join(f's{a}' for a in args)}){into}")
        lines.append(f"# outputs: {', '.join(f'{k} = s{v}' for k, v in p.outputs.items())}")
        return "\n".join(lines)

    def __call__(self, values: dict | None = None, **kw) -> dict:
        """Evaluate; ``values`` (or keywords) map leaf names to data. Leaves not given use their exact values.

        Raises:
            LedgerError: for a name that is not a leaf of the ledger, or a leaf with no value.
            ShapeError: when batched inputs disagree on their batch axes (names them), or a value does not
                have its leaf's shape.
            ConventionError: a value the backend cannot read (see :func:`symseq.evaluate`).
            EvaluationError: when an output is undefined (nan, or an infinity in a row that does not allow
                one) or the program divides by zero: the rows are then evaluated one by one on the same
                values to name the row at fault and give its hint, as :func:`symseq.evaluate` does.

        Warns:
            PrecisionWarning: floats given to the mpmath backend (see :func:`symseq.evaluate`).
        """
        values = dict(values or {}, **kw)
        p, k = self.program, self.kernel
        slots = self._slots.copy()  # the constants in place
        batch, per_param, read = {}, [], 0
        from_user, arrays = k.from_user, self._arrays
        for name, s, it in self._leaves:
            if name in values:
                v = from_user(values[name], it.shape, name)
                read += 1
                if arrays and v.ndim > 2:  # leading batch axes
                    batch[name] = v.shape[:-2]
                    if it.kind == "parameter":
                        per_param.append(name)
                slots[s] = v
            elif it.value is not None:  # converted once, on the first call that needs it
                if name not in self._defaults:
                    v = k.const(it.value)
                    if isinstance(v, np.ndarray):
                        v.setflags(write=False)  # shared by every call: never changed in place
                    self._defaults[name] = v
                slots[s] = self._defaults[name]
            else:
                self._check_names(values)
                raise LedgerError(f"no value for {name}: pass it by name (the compiled function reads "
                                  f"{', '.join(p.inputs)})")
        if read < len(values):
            self._check_names(values)
        if hasattr(k, "warn_floats"):
            k.warn_floats(values, stacklevel=3)
        if self.batch_reduce:
            if per_param:
                raise ShapeError(f"batch_reduce={self.batch_reduce!r} sums the gradients of parameters shared by every "
                                 f"example, but {', '.join(per_param)} came with batch axes; give parameters "
                                 f"without a batch axis, or compile without batch_reduce")
        if len(set(batch.values())) > 1:
            raise ShapeError("inputs disagree on their batch axes: "
                             + ", ".join(f"{n} has {b}" for n, b in batch.items())
                             + "; give every batched input the same leading shape (or none)")
        with np.errstate(all="ignore"):  # an undefined output is the EvaluationError below, not a NumPy warning
            values = self._run(slots, batch)
        result = {}
        for name, s, item in self._outputs:
            bad = k.first_nonfinite(values[s], allow_infinity=item.allows_infinity)
            if bad is not None:
                self._name_the_row(values, f"output {name} is {bad[1]}{where_text(bad[0], item.shape)}")
            v = k.to_output(values[s], item.shape)
            result[name] = self._mean(name, v, batch) if batch and self.batch_reduce == "mean" else v
        return result

    def _check_names(self, values: dict):
        """Raise LedgerError naming the values given for names the program does not read (a misspelt leaf)."""
        inputs = self.program.inputs
        unknown = [n for n in values if n not in inputs]
        if unknown:
            raise LedgerError(f"values given for {', '.join(unknown)}, which the compiled ledger does not read; "
                              f"it reads {', '.join(inputs) or 'nothing'}")

    def _run(self, slots: list, batch: dict) -> list:
        """Run the program on ``slots`` (leaves and constants filled in); returns the slots (the outputs filled in).

        The first calls step through the instruction list. Once they have taken as long as writing and
        compiling the program as one straight-line Python function would (``_GENERATE_SECONDS`` per instruction),
        the instructions run as that function (:meth:`_straight_line`), which reads its operands from local
        variables instead of indexing the slot list: the same calls in the same order, so the same results, at a
        fraction of the stepping cost per instruction (a 50-digit mpmath program spends much of its time there).
        A program called a few times is never written out. With batched inputs and a kernel that can
        (``folds_rows``, NumPy), the first such call steps through once more, noting the shapes, and the calls with
        the same inputs batched run the program on folded rows when it has one (:meth:`_fold_rows`). An error (a
        division by zero) is located by stepping through the instructions again."""
        if self._program_fn is None and self._stepped_seconds < _GENERATE_SECONDS * len(self.program.instructions):
            start = time.perf_counter()
            try:
                return self._step_through(slots)
            finally:
                self._stepped_seconds += time.perf_counter() - start
        try:
            if batch and self._folds:
                key = frozenset(batch)
                if key not in self._folded:  # the first call with these inputs batched: step through, noting shapes
                    shapes: dict = {}
                    slots = self._step_through(slots, shapes)
                    self._folded[key] = self._fold_rows(shapes)
                    return slots
                if self._folded[key] is not None:
                    return self._folded[key](slots, next(iter(batch.values())))
            return self._straight_line()(slots)
        except ZeroDivisionError:
            return self._step_through(slots)

    def _fold_rows(self, shapes: dict):
        """The program run on a batch of rows folded into one matrix, when it computes the same numbers that way;
        else None. ``shapes``: the shape of every slot in a call with the batched inputs of the calls it serves.

        A batch of rows, lead + (1, n), is read as one (N, n) matrix (N = the product of lead; a view), the
        program runs on two-dimensional arrays, and each batched output is read back as lead + (1, m). That holds
        when every batched value is a row with the inputs' lead and every instruction with a batched operand is
        one of: element-wise (its other operands rows, 1 × 1 or numbers); a row times a matrix without batch axes
        (``a @ W``); Σ_b a_bᵀ b_b of two batched rows (``a.T @ b``); a sum over the batch (over axis 0); a sum or
        mean over a row's entries (over the last axis). The matrix products are written as NumPy's ``@`` on the
        same matrices as the kernel's reshaped ones, so the numbers are the kernel's; a sum over the batch may
        add in another order when the batch has several axes. An element-wise instruction that writes into an
        operand (:meth:`_Compiler._write_in_place`) is written as the ufunc's call with ``out=`` when ``shapes``
        show that the operand holds the result. On the 16-step Elman RNN of benchmarks/speed.py (d = 64, batch
        64), called between nn.RNN calls: 0.46–0.52× torch folded, 0.51–0.55× unfolded, in the same runs; with the
        direct ``out=`` calls, 0.49–0.51× when nn.RNN took 2.5–2.7 ms (the numba backend compiles the same
        folded program into one function: :mod:`.numba_matrix`)."""
        batched, kinds, _ = self._fold_plan(shapes)
        if kinds is None:
            return None
        p, k = self.program, self.kernel
        forms = []
        for i, ((out, fn, args, label), kind) in enumerate(zip(p.instructions, kinds)):
            into = p.in_place.get(i)
            if kind == "row sum":  # Σ (or the mean) over a row's entries: the last axis of the folded rows
                node = p.sums[out]
                form = functools.partial(k.mean, axis=1, count=node.count) if node.mean else \
                    functools.partial(k.sum, axis=1)
            elif kind in _FOLDED:
                form = _FOLDED[kind]
            elif kind in ("Σ aᵀb, a shared", "Σ aᵀb, b shared"):  # the kernel's broadcast of the shared row, as
                # unfolded: the folded rows given back their batch axis
                form = ("{f}({0}, {1}[:, None, :])" if kind.endswith("a shared") else "{f}({0}[:, None, :], {1})",
                        k.batch_tn)
            elif i in p.in_place_ufunc and len(shapes[out] or ()) >= 2 and shapes[into] == shapes[out]:
                # its operand has the result's shape in every call with these inputs batched: written into it
                # with no check (the program's own array, never a view: _Compiler._write_in_place)
                ufunc = p.in_place_ufunc[i]
                form = (_in_place_text(ufunc, args.index(into), len(args)), ufunc)
            else:
                form = None  # as in the program
            forms.append(form)
        inputs = sorted(set(p.inputs.values()) & batched)
        return self._write(forms, fold=(inputs, sorted(set(p.outputs.values()) & batched)))

    def _fold_plan(self, shapes: dict):
        """(the slots with batch axes, what each instruction is on folded rows, None) when the program computes the
        same numbers on a batch of rows folded into one matrix (:meth:`_fold_rows`); else (that set, None, why not,
        in words). ``shapes``: the shape of every slot in a call with the batched inputs of the calls it serves.
        Per instruction: None (no operand with batch axes: as it is), ``"rows @ W"`` (batched rows times a matrix
        without batch axes), ``"Σ aᵀb"`` (of two batched rows), ``"batch sum"``, ``"row sum"`` (a sum or mean
        over a row's entries, over the last axis), ``"Σ aᵀb, a shared"`` or ``"Σ aᵀb, b shared"`` (Σ_b a_bᵀ b_b
        where one of them is a row without batch axes, such as an initial state h_{−1} given once for every
        example) or ``"elementwise"``."""
        p = self.program
        batched = {s for s, shape in shapes.items() if shape is not None and len(shape) > 2}
        if len({shapes[s][:-2] for s in batched}) > 1:
            return batched, None, "the values' batch axes differ"
        for s in sorted(batched):
            if shapes[s][-2] != 1:
                m, n = shapes[s][-2:]
                names = {v: n for n, v in p.inputs.items()} | {out: f"the result of {label}"
                                                              for out, _, _, label in p.instructions}
                return batched, None, f"{names.get(s, f's{s}')} is a {m}×{n} matrix per example"
        row = {s for s, shape in shapes.items() if shape is not None and len(shape) == 2 and shape[0] == 1}
        elementwise = {"Add", "Sub", "Mul", "Div", "Neg", "accumulate"}
        kinds = []
        for out, fn, args, label in p.instructions:
            hit = [a in batched for a in args]
            if not any(hit):
                kind = None
            elif label == "MatMul" and hit == [True, False] and len(shapes[args[1]]) == 2:
                kind = "rows @ W"
            elif label == "batch_tn" and all(hit):
                kind = "Σ aᵀb"
            elif label == "batch_tn" and args[hit.index(False)] in row:  # h_{−1} given once, g_0 per example
                kind = "Σ aᵀb, a shared" if hit == [False, True] else "Σ aᵀb, b shared"
            elif label == "batch_sum":
                kind = "batch sum"
            elif out in p.sums and p.sums[out].axis in (None, 1) and out in batched:
                kind = "row sum"
            elif (label in elementwise or out in p.ops) and out in batched \
                    and all(h or a in row or shapes[a] in ((1, 1), ()) for h, a in zip(hit, args)):
                kind = "elementwise"
            else:
                return batched, None, f"{label} mixes the rows of a batch"
            kinds.append(kind)
        return batched, kinds, None

    def _straight_line(self):
        """The program as one Python function ``program(slots)``: ``s5 = f0(s3, s1)`` per instruction, ``del`` of
        arrays after their last use, the outputs written back into ``slots``; on mpmath's raw numbers when it can
        be (:meth:`_raw_forms`). Made once."""
        if self._program_fn is None:
            forms = self._raw_forms(self._steps())
            self._program_fn = self._write(forms, raw=self.kernel.raw if forms else None)
        return self._program_fn

    def _write(self, forms=None, raw=None, fold=None):
        """Write the instruction list out as one Python function. Its source is written from the instruction list
        alone (slot numbers and the instructions' positions; the functions are passed in a namespace, never as
        text), like the numba backend's loop.

        ``forms``: per instruction, a template over its operands (``"{0} @ {1}"``), a function to call instead of
        the instruction's, a template that calls a function ``{f}`` and that function (``("{f}({0}, {1},
        out={0})", np.add)``; ``{out}`` is the result), or None (the instruction's function, or Python's operator
        for +, −, ×). ``raw``: the kernel's raw arithmetic (``kernel.raw``, with ``forms`` from
        :meth:`_raw_forms`): the values read are converted into raw numbers, the outputs back. ``fold``: (batched
        input slots, batched output slots) of a program on folded rows (:meth:`_fold_rows`), then called as
        ``program(slots, lead)``."""
        steps = self._steps()
        forms = forms or [None] * len(steps)
        written = {out for out, _, _, _ in steps}
        outputs = sorted(set(self.program.outputs.values()))
        read = sorted({a for _, _, args, _ in steps for a in args} - written)
        enter, leave = (raw.enter, raw.leave) if raw else ("{}", "{}")
        lines = ["def program(slots, lead=None):"] + ([f"    {raw.setup}"] if raw else [])
        lines += [f"    s{a} = {enter.format(f'slots[{a}]')}" for a in read]
        if fold:  # a batch of rows as one matrix (a view)
            lines += [f"    s{a} = s{a}.reshape(-1, s{a}.shape[-1])" for a in fold[0] if a in read]
        scope = {}
        for i, (out, fn, args, free) in enumerate(steps):
            operands = [f"s{a}" for a in args]
            form = forms[i]
            if callable(form):
                scope[f"f{i}"], form = form, None
            elif isinstance(form, tuple):  # (template naming the function {f}, the function)
                form, scope[f"f{i}"] = form
            else:
                scope[f"f{i}"] = fn
            if form is None and not raw:
                form = _OPERATORS.get(fn)
                if form is not None and len(args) != (2 if "{1}" in form else 1):
                    form = None
            call = form.format(*operands, f=f"f{i}", out=f"s{out}") if form is not None \
                else f"f{i}({', '.join(operands)})"
            lines.append(f"    s{out} = {call}")
            if free:
                lines.append(f"    del {', '.join(f's{a}' for a in free)}")
        for s in outputs:
            if fold and s in fold[1] and (s in written or s in read):  # back to lead + (1, m)
                lines.append(f"    slots[{s}] = s{s}.reshape(lead + (1, s{s}.shape[-1]))")
            elif s in written:
                lines.append(f"    slots[{s}] = {leave.format(f's{s}')}")
        lines.append("    return slots")
        scope |= raw.names if raw else {}
        # our own instruction list as source, no text of a document or a user (nor the ledger's title)
        exec(builtins.compile("\n".join(lines) + "\n", "<symseq compiled program>", "exec"), scope)
        return scope["program"]

    def _raw_forms(self, steps) -> list | None:
        """One expression per step in the kernel's arithmetic on raw numbers (``kernel.raw``, mpmath's
        :class:`~.mpmath_backend.RawMpf`), when the program can run on them: every value it reads is a number (a
        scalar leaf or constant, no array) and every step is a scalar instruction the kernel writes; else None,
        and the program calls the instructions' functions."""
        raw, p = getattr(self.kernel, "raw", None), self.program
        if raw is None or any(self.ledger[n].shape != () for n in p.inputs) \
                or any(not hasattr(v, "_mpf_") for v in p.constants.values()):
            return None
        forms = [raw.form(p.ops[out], len(args)) if out in p.ops else None for out, _, args, _ in steps]
        return None if None in forms else forms

    def _step_through(self, slots: list, shapes: dict | None = None) -> list:
        """Run the instructions one by one; ``shapes``, when given, is filled with the shape of every slot."""
        p = self.program
        i = 0
        if shapes is not None:
            shapes.update((s, getattr(slots[s], "shape", None)) for s in range(len(slots)) if slots[s] is not None)
        try:
            for i, (out, fn, args, free) in enumerate(self._steps()):
                if len(args) == 2:  # most instructions: no list of arguments built
                    slots[out] = fn(slots[args[0]], slots[args[1]])
                elif len(args) == 1:
                    slots[out] = fn(slots[args[0]])
                else:
                    slots[out] = fn(*[slots[a] for a in args])
                if shapes is not None:
                    shapes[out] = getattr(slots[out], "shape", None)
                for f in free:  # release intermediates after their last use (keeps memory, and caches, small)
                    slots[f] = None
        except ZeroDivisionError:
            self._name_the_row(slots, f"a division by zero in the compiled program ({p.instructions[i][3]})")
        return slots

    def _steps(self) -> list:
        """(out, fn, args, slots to free) per instruction; for mpmath (scalars, no arrays to release) none are."""
        if getattr(self, "_step_list", None) is None:
            p = self.program
            self._step_list = [(out, fn, args, tuple(free) if self._arrays else ())
                               for (out, fn, args, _), free in zip(p.instructions, p.frees)]
        return self._step_list

    def _name_the_row(self, slots: list, what: str):
        """Evaluate the rows one by one on the leaf values in ``slots`` (the program never writes into them), so
        the error names the row at fault and gives its hint; raise ``what`` when they do not fail (an undefined
        value that only the program's order makes)."""
        given = self.ledger.leaf_values(self.kernel)
        given.update((name, slots[s]) for name, s in self.program.inputs.items())
        self.ledger.run(self.kernel, given, self.names)  # raises the row's EvaluationError
        raise EvaluationError(f"{what}; evaluated row by row the same values give no undefined row")

    def _mean(self, name, v, batch):
        """A parameter's gradient summed over the batch (``batch_reduce="mean"``) divided by the batch's size."""
        it = self.ledger[name]
        if it.kind == "adjoint" and self.ledger[it.adjoint_of].kind == "parameter":
            return v / int(np.prod(next(iter(batch.values()))))
        return v


def requested(ledger, outputs, inputs=None) -> tuple[list, set]:
    """The outputs (a list, each a name of ``ledger``) and the leaves given at call time (a set; default every
    leaf) of a compiled program, checked.

    Raises:
        LedgerError: an output that is not in the ledger, or an input that is not one of its leaves.
    """
    outputs = list(outputs)
    for n in outputs:
        ledger[n]
    leaves = {it.name for it in ledger.leaves}
    inputs = leaves if inputs is None else set(inputs)
    bad = inputs - leaves
    if bad:
        raise LedgerError(f"{', '.join(sorted(bad))} are not inputs or parameters of this ledger")
    return outputs, inputs


@without_cycle_collection
def compile(ledger, outputs: Iterable[str], *, backend: str = "numpy", inputs: Iterable[str] | None = None,
            dps: int = 50, device=None, dtype=None, batch_reduce: str | None = None) -> CompiledLedger:
    """Compile the rows needed for ``outputs`` into a straight-line program for ``backend``.

    Args:
        outputs: row or adjoint names to return.
        backend: ``numpy`` (float64, leading batch axes), ``mpmath`` (``dps``
            digits; exact inputs stay exact until evaluation), ``torch``
            (``device``, ``dtype``; differentiable by torch autograd) or
            ``numba`` (float64; needs the ``numba`` extra): scalar rows as
            one compiled loop over the batch
            (:mod:`symseq.backends.numba_backend`), matrix rows as one
            compiled function on a batch of rows folded into one matrix
            (:mod:`symseq.backends.numba_matrix`).
        inputs: leaves that may be given at call time (default: all leaves).
            Other leaves are compiled in as constants.
        batch_reduce: ``"sum"`` or ``"mean"`` to reduce the adjoints of
            unbatched leaves (weights) over the batch axes, as a batched loss
            does; None keeps one gradient per example.

    Raises:
        ConventionError: unknown backend (lists the valid ones) or batch_reduce; for ``numba``, an instruction or
            function it does not compile (names it).
        BackendUnavailable: torch or numba missing, or CUDA asked for where there is none.
        LedgerError: an output that is not in the ledger.
    """
    from . import kernel as make_kernel

    if batch_reduce not in (None, "sum", "mean"):
        raise ConventionError(f"batch_reduce must be None, 'sum' or 'mean'; got {batch_reduce!r}")
    if backend == "numba":
        from .numba_backend import compile_numba

        return compile_numba(ledger, outputs, inputs=inputs, device=device, dtype=dtype, batch_reduce=batch_reduce)
    k = make_kernel(backend, dps=dps, device=device, dtype=dtype)
    outputs, inputs = requested(ledger, outputs, inputs)
    comp = _Compiler(ledger, k, inputs, reduce_params=batch_reduce is not None)
    return CompiledLedger(ledger, comp.build(outputs), k, outputs, batch_reduce)


class _Compiler:
    def __init__(self, ledger, kernel, inputs, reduce_params=False, straight=False, in_place=True):
        self.L = ledger
        self.reduce_params = reduce_params
        self.in_place = in_place  # NumPy: element-wise instructions may write into a temporary operand
        self.straight = straight  # scalar instructions only, each with its op (for a code generator)
        self.k = kernel
        self.inputs = inputs
        self.p = Program()
        self.slot_of: dict[str, int] = {}
        self.const_cache: dict = {}
        self.row_exprs: dict = {}  # scalar row expression -> row symbol (for reuse)
        self.row_nodes: dict = {}  # matrix row node key -> row name
        self.row_maps: dict = {}  # key of a Map row's argument -> [(function body, row name)]
        self.emitted: dict = {}  # node key -> slot of every tree emitted so far
        self.expr_slots: dict = {}  # scalar expression (over row symbols) -> slot, shared by every row
        self.folded: dict = {}  # symbol of a leaf compiled in as the exact constant 0 or 1 -> that number
        self.zero_slots: set = set()  # slots that hold an exact zero (array or scalar) known at compile time
        self.fresh: set = set()  # slots written by an element-wise instruction into a new array of its own
        self.map_reductions: dict = {}  # (outer, inner) function pair -> what _map_of_row found
        self.plans: dict = {}  # scalar expression -> its plan (scalar.plan): the same body in every step
        self.in_place_forms: dict = {}  # slot -> (argument position -> the instruction writing into that argument)
        self.in_place_adds: set = set()  # slots of sums of three or more arrays, which may add into their first two
        self.vectorized = kernel.arrays  # whole arrays per instruction (else entry by entry: mpmath)

    def build(self, outputs) -> Program:
        needed = self.L.needed(outputs)
        position = {n: i for i, n in enumerate(needed)}
        streams, ready = self._plan_sums(needed, outputs, position)
        exact_leaves: dict = {}  # name → (exact value, the kernel's), for warn_indistinct
        for i, n in enumerate(needed):
            it = self.L[n]
            if it.is_leaf:
                s = self.p.new_slot()
                self.slot_of[n] = s
                if n in self.inputs:
                    self.p.inputs[n] = s
                    if it.value is not None:  # its default, converted on the first call that needs it
                        exact_leaves[n] = (it.value, self.k.const(it.value))
                elif it.value is not None:
                    self.p.constants[s] = self.k.const(it.value)
                    exact_leaves[n] = (it.value, self.p.constants[s])
                    self._note_exact_leaf(it, s)
                else:
                    raise LedgerError(f"{n} has no value and is not an input of the compiled function")
            elif n in streams:
                self.slot_of[n] = self._finish(streams[n])
            elif self.reduce_params and n in outputs and it.kind == "adjoint" \
                    and self.L[it.adjoint_of].kind == "parameter":
                self.slot_of[n] = self.emit_reduced(it.node)  # Σ over the batch, term by term
            else:
                self.slot_of[n] = self.emit(it.node)
                self._remember(n, it)
            for stream, term in ready.get(i, ()):  # terms of long sums whose inputs are now all computed
                self._accumulate(stream, term)
        warn_indistinct(self.k, exact_leaves, stacklevel=6)
        self.p.outputs = {n: self.slot_of[n] for n in outputs}
        self._prune()
        self._liveness()
        if self.k.name == "numpy" and not self.straight and self.in_place:
            self._write_in_place()
        return self.p

    def _note_exact_leaf(self, it, slot):
        """A leaf compiled in as a constant (not an input: the caller cannot pass it) whose exact value is 0 or 1
        folds away: ``w_h h_{-1}`` with h_{-1} = 0 is not computed, ``1 · x`` is x."""
        v = it.value
        if isinstance(v, sp.MatrixBase):
            if all(e == 0 for e in v):
                self.zero_slots.add(slot)
        elif isinstance(v, sp.Basic) and v.is_Number and v in (sp.S.Zero, sp.S.One):
            self.folded[it.symbol] = v
            if v == 0:
                self.zero_slots.add(slot)

    def _remember(self, n, it):
        if isinstance(it.node, ops.Scalar):
            if not it.node.expr.is_Symbol and not it.node.expr.is_number:
                self.row_exprs.setdefault(it.node.expr, it.symbol)
        elif not isinstance(it.node, ops.Ref):
            self.row_nodes.setdefault(it.node.key(), n)
            if isinstance(it.node, ops.Map):
                self.row_maps.setdefault(it.node.children[0].key(), []).append((it.node.fn, n))

    # -- long sums over uses (a shared weight's gradient Σ_t g_t^z x_t) are accumulated as their terms
    #    become computable, so the terms need not all be alive at once
    def _plan_sums(self, needed, outputs, position):
        streams, ready = {}, {}
        for n in needed:
            it = self.L[n]
            if it.kind != "adjoint" or not self.L[it.adjoint_of].is_leaf:
                continue
            node = it.node
            if isinstance(node, ops.Add) and len(node.children) >= 3:
                terms = list(node.children)
            elif isinstance(node, ops.Scalar) and node.expr.is_Add and len(node.expr.args) >= 3:
                terms = list(node.expr.args)
            else:
                continue
            reduce = self.reduce_params and n in outputs and self.L[it.adjoint_of].kind == "parameter"
            stream = {"row": n, "node": node, "reduce": reduce, "full": None, "reduced": None}
            streams[n] = stream
            for term in terms:
                deps = ops.refs(term) if isinstance(term, ops.Node) else {x.name for x in term.free_symbols}
                last = max((position[d] for d in deps if d in position), default=0)
                ready.setdefault(last, []).append((stream, term))
        return streams, ready

    def _accumulate(self, stream, term):
        k = self.k
        if isinstance(term, ops.Node):
            if stream["reduce"] and _is_outer(term, stream["node"].shape):
                slot, key = self.emit_outer(term), "reduced"
            else:
                slot, key = self.emit(term), "full"
            add = k.add
        else:
            term = self._reuse_rows(term)
            dot = self.emit_dot(term) if stream["reduce"] else None
            if dot is not None:
                slot, key, add = dot, "reduced", operator.add
            else:
                slot, key, add = self.emit_expr(term, {}, {}), "full", operator.add
        if stream[key] is None or stream[key] in self.zero_slots:
            stream[key] = slot
        elif slot in self.zero_slots:
            return
        else:
            stream[key] = self.instr(add, [stream[key], slot], "accumulate")
            if add is operator.add:
                self.p.ops[stream[key]] = ("add",)
            if self.vectorized:
                self.fresh.add(stream[key])  # a new array, or its first term's (a running sum of the program's own)

    def _finish(self, stream) -> int:
        k = self.k
        node = stream["node"]
        full, reduced = stream["full"], stream["reduced"]
        if stream["reduce"] and full is not None:
            full = self.instr(k.batch_sum, [full], "batch_sum")
        parts = [p for p in (full, reduced) if p is not None]
        out = parts[0] if len(parts) == 1 else self.instr(k.add, parts, "add")
        if isinstance(node, ops.Add) and node.shape != () and all(c.shape != node.shape for c in node.children):
            out = self.instr(lambda v, _s=node.shape: k.broadcast_to(v, _s), [out], "Broadcast")
        return out

    def _prune(self):
        """Drop the instructions whose value neither an output nor a kept instruction reads: the adjoint rows a
        requested gradient did not need after all (g_0^z when only ∂L/∂W_h is asked for, its product with W_h)."""
        live = set(self.p.outputs.values())
        kept = []
        for ins in reversed(self.p.instructions):
            if ins[0] in live:
                kept.append(ins)
                live.update(ins[2])
        self.p.instructions = kept[::-1]

    def _liveness(self):
        keep = set(self.p.outputs.values()) | set(self.p.constants) | set(self.p.inputs.values())
        last = {}
        for i, (out, fn, args, _) in enumerate(self.p.instructions):
            for a in args:
                last[a] = i
        frees = [[] for _ in self.p.instructions]
        for slot, i in last.items():
            if slot not in keep:
                frees[i].append(slot)
        self.p.frees = frees

    def _write_in_place(self):
        """An element-wise instruction whose argument is a new array of its own (written by an earlier element-wise
        instruction) that no later instruction reads writes its result into that array (NumPy ``out=``): a chain
        such as (1 − h²)·g then makes one temporary, not three. Results are bitwise those of the plain program."""
        p = self.p
        k = self.k
        ufuncs = _IN_PLACE | {k.add: np.add, k.mul: np.multiply, k.div: k.div, k.neg: np.negative}
        # an array that a view reads (Xᵀ, an entry, a slice) is never written: the view may be read after the
        # array's own last use
        viewed = {a for _, _, args, label in p.instructions if label.split(" ")[0] in _VIEWS for a in args}
        for i, (out, fn, args, label) in enumerate(p.instructions):
            ufunc = ufuncs.get(fn) or (np.add if out in self.in_place_adds else None)
            into = self.in_place_forms.get(out)  # a row softmax
            if ufunc is None and into is None:
                continue
            free = set(p.frees[i])
            for pos, a in enumerate(args):
                # a sum of three or more terms writes its first partial sum into the array before adding the
                # rest: an array that is also a later term (X + B + X) would be read after it was overwritten
                # (a binary operation reads each element before it writes it, so x ⊙ x in place of x is safe)
                repeated = len(args) > 2 and args.count(a) > 1
                if a not in free or a not in self.fresh or a in viewed or repeated:
                    continue
                if ufunc is not None and pos < 2:
                    p.instructions[i] = (out, _in_place(ufunc, pos, len(args)), args, label)
                    p.in_place_ufunc[i] = ufunc
                elif ufunc is None:
                    p.instructions[i] = (out, into(pos), args, label)
                else:
                    continue
                p.in_place[i] = a
                break

    # -- helpers
    def const(self, value, key=None):
        key = key if key is not None else ("c", value)
        if key not in self.const_cache:
            s = self.p.new_slot()
            self.p.constants[s] = value
            self.const_cache[key] = s
        return self.const_cache[key]

    def instr(self, fn, args, label):
        out = self.p.new_slot()
        self.p.instructions.append((out, fn, tuple(args), label))
        return out

    # -- nodes
    def emit(self, node) -> int:
        if isinstance(node, ops.Ref):
            return self.slot_of[node.name]
        key = None
        if not isinstance(node, (ops.Scalar, ops.Const)):
            key = node.key()
            hit = self.row_nodes.get(key)
            if hit is not None:  # the same tree as an earlier row: read the row
                return self.slot_of[hit]
            if key in self.emitted:  # the same tree emitted before (Wᵀ in every step): reuse its slot
                return self.emitted[key]
        if isinstance(node, ops.Const) or (isinstance(node, ops.Scalar) and node.expr.is_number):
            value = node.value if isinstance(node, ops.Const) else node.expr
            return self.const(self.k.const(value), key=("node", node.key()))
        if isinstance(node, ops.Scalar):
            return self.emit_expr(self._reuse_rows(node.expr), {}, {})
        if isinstance(node, ops.Map):
            out = self.emit_map(node)
        elif (out := self._emit_broadcasting(node)) is not None:
            pass
        else:
            args = [self.emit(c) for c in node.children]
            out = self._fold_node(node, args)
            if out is None:
                fn = self._call(node, args)
                out = self.instr(fn, args, type(node).__name__)
                if self.vectorized and (fn in (self.k.add, self.k.mul, self.k.div, self.k.neg, self.k.matmul,
                                               operator.truediv) or isinstance(node, ops.SoftmaxRows)):
                    self.fresh.add(out)  # a new array of its own (a transpose or an index would be a view)
                if type(node) is ops.Add and len(args) > 2:
                    self._may_add_in_place(out)
                if isinstance(node, ops.Sum):
                    self.p.sums[out] = node
                if isinstance(node, ops.SoftmaxRows) and self.k.name == "numpy":
                    self.in_place_forms[out] = lambda pos, _al=node.allowed: (
                        lambda a: _softmax(a, _al, overwrite=type(a) is np.ndarray and a.flags.writeable))
        self.emitted[key] = out
        return out

    def _emit_broadcasting(self, node):
        """An element-wise sum, product or quotient of two arrays as one NumPy (or torch) operation that
        broadcasts, when one operand has the result's shape: the other operand Broadcast(y) is read as y, and
        x + (−y) is computed as x − y. The softmax adjoint A ⊙ (G − Broadcast(Σ_j G ⊙ A)) then makes neither an
        (…, m, n) copy of its row sums nor a negated copy of that. x + (−y) and x − y are the same IEEE double,
        as are the broadcast and the copied operand, so the results are bitwise those of the nodes as written.
        None when the node is not of that form."""
        if not self.vectorized or type(node) not in (ops.Add, ops.Mul, ops.Div) or len(node.children) != 2:
            return None
        kids = list(node.children)
        full = [c.shape == node.shape for c in kids]
        if type(node) is ops.Add and full[0] and isinstance(kids[1], ops.Neg):
            x, y = kids[0], kids[1].children[0]
        elif type(node) is ops.Add and full[1] and isinstance(kids[0], ops.Neg):
            x, y = kids[1], kids[0].children[0]
        else:
            x = y = None
        if x is not None:  # x + (−y) = x − y
            y = y.children[0] if isinstance(y, ops.Broadcast) else y
            sx, sy = self.emit(x), self.emit(y)
            if sy in self.zero_slots:
                return sx
            out = self.instr(operator.sub, [sx, sy], "Sub")
        else:
            stripped = [k.children[0] if isinstance(k, ops.Broadcast) and full[1 - i] else k
                        for i, k in enumerate(kids)]
            if all(a is b for a, b in zip(stripped, kids)):
                return None
            args = [self.emit(k) for k in stripped]
            out = self.instr(self._call(node, args), args, type(node).__name__)
        self.fresh.add(out)
        return out

    def _call(self, node, args):
        """The function of the instruction for ``node`` on the slots ``args`` (:func:`_kernel_call`); a NumPy quotient
        by a constant compiled in with no zero entry (L/2, S/√d_k) is Python's ``/``: the same quotient, without
        the kernel's guard for a division by zero, which cannot happen (1.1 µs a call, against 2.3 µs)."""
        if type(node) is ops.Div and self.k.name == "numpy" and args[1] in self.p.constants:
            c = self.p.constants[args[1]]
            if isinstance(c, np.ndarray) and c.size and np.all(c != 0):
                return operator.truediv
        return _kernel_call(node, self.k)

    def _may_add_in_place(self, out):
        """A sum of several arrays (x W_xᵀ + h W_hᵀ + b) is a new array, and may write into its first or second
        term when that is a temporary nothing reads afterwards (NumPy)."""
        if self.k.name == "numpy":
            self.fresh.add(out)
            self.in_place_adds.add(out)

    def zero(self, shape) -> int:
        """A slot holding an exact zero of ``shape`` (compiled in once)."""
        value = sp.S.Zero if shape == () else sp.zeros(*shape)
        slot = self.const(self.k.const(value), key=("zero", tuple(shape)))
        self.zero_slots.add(slot)
        return slot

    def _fold_node(self, node, args):
        """A product, transpose or negation of an exact zero compiled in (h₋₁ = 0 when h₋₁ is not an input) is that
        zero; such a zero drops out of a sum. None when nothing folds."""
        zero = [a in self.zero_slots for a in args]
        if not any(zero):
            return None
        if isinstance(node, (ops.MatMul, ops.Mul, ops.Transpose, ops.Neg)):
            return self.zero(node.shape)
        if type(node) is ops.Add:
            keep = [(a, c) for a, c, z in zip(args, node.children, zero) if not z]
            if not keep:
                return self.zero(node.shape)
            if not any(c.shape == node.shape for _, c in keep):
                return None  # the zero gave the sum its shape: keep it
            if len(keep) == 1:
                return keep[0][0]
            out = self.instr(lambda *xs, _add=self.k.add: _fold_add(_add, xs), [a for a, _ in keep], "Add")
            self._may_add_in_place(out)
            return out
        return None

    def emit_reduced(self, node) -> int:
        """The batch sum of ``node``: outer products Σ_b a_bᵀ b_b become one matrix product each, the rest
        is added at full batch size and summed once."""
        k = self.k
        if isinstance(node, ops.Scalar):
            expr = self._reuse_rows(node.expr)
            terms = list(expr.args) if expr.is_Add else [expr]
            parts = [self.emit_dot(t) for t in terms]
            rest = [t for t, d in zip(terms, parts) if d is None]
            parts = [d for d in parts if d is not None]
            if rest:
                parts.append(self.instr(k.batch_sum, [self.emit_expr(sp.Add(*rest), {}, {})], "batch_sum"))
            return parts[0] if len(parts) == 1 else self.instr(lambda *xs: _sum(xs), parts, "add")
        terms = list(node.children) if isinstance(node, ops.Add) else [node]
        outer = [t for t in terms if _is_outer(t, node.shape)]
        rest = [t for t in terms if not _is_outer(t, node.shape)]
        parts = [self.emit_outer(t) for t in outer]
        if rest:
            whole = rest[0] if len(rest) == 1 else ops.Add(*rest)
            if whole.shape != node.shape:
                whole = ops.Broadcast(whole, node.shape)
            parts.append(self.instr(k.batch_sum, [self.emit(whole)], "batch_sum"))
        return parts[0] if len(parts) == 1 else self.instr(lambda *xs: _sum(xs), parts, "add")

    def _fold(self, e):
        """``e`` with the leaves compiled in as an exact 0 or 1 replaced by that number: SymPy drops ×1 and +0, and
        a product with an exact 0. A division by such a 0 is left for the program to report."""
        if self.folded and e.free_symbols & self.folded.keys():
            f = e.xreplace(self.folded)
            if not f.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                return f
        return e

    def emit_dot(self, term):
        """Σ over the batch of a product ``c·a·b`` of two scalar rows as one dot product (no array of the products
        is made), or None when ``term`` is not such a product or the kernel has no dot product."""
        if self.straight or not hasattr(self.k, "batch_dot"):
            return None
        term = self._fold(term)
        if term == 0:
            zero = self.const(self.k.const(sp.S.Zero), key=("zero", ()))
            self.zero_slots.add(zero)
            return zero
        if not term.is_Mul:
            return None
        c, rest = term.as_coeff_Mul()
        if not rest.is_Mul or len(rest.args) != 2 or any(a.is_number for a in rest.args):
            return None
        a, b = (self.emit_expr(x, {}, {}) for x in rest.args)
        out = self.instr(self.k.batch_dot, [a, b], "batch_dot")
        if c != 1:
            out = self.instr(operator.mul, [self.const(self.k.lib.number(c), key=("num", c)), out], "mul")
        return out

    def emit_outer(self, term) -> int:
        """Σ over the batch of aᵀ b for a term aᵀ b, as one matrix product."""
        a, b = self.emit(term.children[0].children[0]), self.emit(term.children[1])
        if a in self.zero_slots or b in self.zero_slots:
            return self.zero(term.shape)
        out = self.instr(self.k.batch_tn, [a, b], "batch_tn")
        if self.vectorized:
            self.fresh.add(out)  # a matrix product: a new array (a weight's gradient, accumulated into in place)
        return out

    def _reuse_rows(self, expr):
        """``expr`` with subexpressions that are earlier rows (tanh(z_t) when h_t := tanh(z_t)) read from those rows."""
        return expr.xreplace(self.row_exprs) if self.row_exprs else expr

    def emit_map(self, node: ops.Map) -> int:
        (x,) = node.fn.variables
        body = node.fn.expr
        for fn, row in self.row_maps.get(node.children[0].key(), ()):
            # f(tanh(z)) where h := tanh(z) is a row: evaluate f(h) instead (1 − tanh²(z) → 1 − h²)
            reduced, y = self._map_of_row(node.fn, fn)
            if reduced is not None:
                arg = self.slot_of[row]
                if self.vectorized:
                    return self.emit_expr(reduced, {y: arg}, {})
                body, x = reduced, y
                break
        else:
            arg = self.emit(node.children[0])
        if self.vectorized:
            return self.emit_expr(body, {x: arg}, {})
        # mpmath: compile the body once as a scalar program and apply it entrywise
        sub = _Compiler(self.L, self.k, set())
        s_in = sub.p.new_slot()
        s_out = sub.emit_expr(body, {x: s_in}, {})
        prog = sub.p

        def scalar_fn(v, _prog=prog, _in=s_in, _out=s_out):
            slots = [None] * _prog.n_slots
            for s, c in _prog.constants.items():
                slots[s] = c
            slots[_in] = v
            for out, fn, args, _ in _prog.instructions:
                slots[out] = fn(*[slots[a] for a in args])
            return slots[_out]

        ufunc = np.frompyfunc(scalar_fn, 1, 1)

        def apply(a, _u=ufunc, _f=scalar_fn):
            return _u(a) if isinstance(a, np.ndarray) else _f(a)

        return self.instr(apply, [arg], f"map[{body}]")

    def _map_of_row(self, outer: sp.Lambda, inner: sp.Lambda):
        """(f as a function of y, y) when the body of ``outer`` is a function f of the body of ``inner`` alone
        (outer: 1 − tanh²(x), inner: tanh(x) → 1 − y²), else (None, None); worked out once per pair of functions
        (every step of an RNN has the same pair)."""
        key = (outer, inner)
        if key not in self.map_reductions:
            (x,), (v,) = outer.variables, inner.variables
            g = inner.expr.xreplace({v: x})
            out = (None, None)
            if outer.expr.has(g):
                y = sp.Dummy("y", real=True)
                reduced = outer.expr.xreplace({g: y})
                if x not in reduced.free_symbols:
                    out = (reduced, y)
            self.map_reductions[key] = out
        return self.map_reductions[key]

    def emit_expr(self, e, bind: dict, memo: dict) -> int:
        """Emit the scalar expression ``e``; with no ``bind`` (an expression over row symbols only) a subexpression
        computed for an earlier row (ŷ − y in the loss and in its adjoint) is read from that row's slot."""
        if not bind:
            memo = self.expr_slots
            e = self._fold(e)
        if e in memo:
            return memo[e]
        if e.is_Symbol and e in bind:
            return bind[e]
        step = self.plans.get(e)
        if step is None:
            step = self.plans[e] = plan(e, self.k.lib)
        if step[0] == "symbol":
            if e.name not in self.slot_of:
                raise LedgerError(f"{e.name} is used before it is computed")
            out = self.slot_of[e.name]
        elif step[0] == "number":
            out = self.const(step[1], key=("num", e))
            if e == 0:
                self.zero_slots.add(out)
        else:
            args = [self.emit_expr(a, bind, memo) for a in step[2]]
            out = self.instr(step[1], args, _label(e, step[1]))
            self.p.ops[out] = _op(e, step[1])
            if self.vectorized:
                self.fresh.add(out)
        memo[e] = out
        return out


def _kernel_call(node, k):
    """The function an instruction for ``node`` calls: the kernel's own method for the common binary and unary
    nodes (one call less per instruction), else the node's ``forward``."""
    direct = {ops.MatMul: k.matmul, ops.Transpose: k.transpose, ops.Mul: k.mul, ops.Div: k.div, ops.Neg: k.neg}
    fn = direct.get(type(node))
    if fn is None and type(node) is ops.Add and len(node.children) == 2:
        fn = k.add
    return fn if fn is not None else (lambda *vals, _n=node: _n.forward(k, list(vals)))


def _is_outer(term, shape) -> bool:
    """Whether ``term`` is aᵀ b of the full ``shape`` (a weight's gradient contribution Σ_t g_tᵀ x_t)."""
    return (isinstance(term, ops.MatMul) and isinstance(term.children[0], ops.Transpose)
            and term.shape == shape)


def _fold_add(add, xs):
    out = xs[0]
    for x in xs[1:]:
        out = add(out, x)
    return out


def _sum(xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def _label(e, fn=None) -> str:
    if fn is operator.sub:
        return "sub"
    if fn is operator.neg:
        return "neg"
    if e.is_Add:
        return "add"
    if e.is_Mul:
        return "mul"
    if e.is_Pow:
        return "square" if e.exp == 2 else "pow"
    return type(e).__name__.lower()


def _op(e, fn):
    """What a scalar instruction computes, as data (the code generator of :mod:`.numba_backend` reads it):
    ``("add",)``, ``("sub",)``, ``("neg",)``, ``("mul",)`` for two or more factors, ``("signed", signs)`` for a sum
    with subtracted terms, ``("pow", n)`` with n an Integer or ½ or −½, ``("powx",)`` for a power with a variable
    exponent, ``("call", name)`` for a function of :mod:`symseq.functions` or SymPy (tanh, exp, sigmoid, …)."""
    if fn is operator.sub:
        return ("sub",)
    if fn is operator.neg:
        return ("neg",)
    if e.is_Add:
        if fn is operator.add:
            return ("add",)
        return ("signed", fn.signs)
    if e.is_Mul:
        return ("mul",)
    if e.is_Pow:
        x = e.exp
        if x.is_Integer or x in (sp.S.Half, -sp.S.Half):
            return ("pow", x)
        return ("powx",)
    if isinstance(e, sp.Heaviside):
        return ("call", "heaviside")
    name = "abs" if type(e) is sp.Abs else type(e).__name__.lower()
    return ("call", name)


def _into(ufunc, pos):
    """``ufunc`` of two arguments writing into argument ``pos`` when it is an array that can take the result."""
    def run(a, b, _u=ufunc, _p=pos):
        target = a if _p == 0 else b
        if type(target) is np.ndarray and target.flags.writeable:
            try:
                return _u(a, b, out=target)
            except (ValueError, TypeError):  # the result is larger than the argument (broadcasting): a new one
                pass
        return _u(a, b)
    return run


def _into1(ufunc):
    def run(a, _u=ufunc):
        if type(a) is np.ndarray and a.flags.writeable:
            try:
                return _u(a, out=a)
            except (ValueError, TypeError):
                pass
        return _u(a)
    return run


def _in_place(ufunc, pos, n):
    """The instruction of ``n`` operands computed by ``ufunc`` (a NumPy ufunc, or the kernel's quotient), written
    into operand ``pos`` when that is an array that can take the result: ``ufunc(a, b, out=a)``; of one operand
    with a ufunc of two (x², as x · x) or of one; of three or more, a sum added left to right."""
    if n == 1:
        return _square_into if ufunc is np.multiply else _into1(ufunc)
    return _into(ufunc, pos) if n == 2 else _add_into(pos)


def _in_place_text(ufunc, pos, n) -> str:
    """:func:`_in_place` as the text of a straight-line program that knows the operand can take the result:
    a template over the operands, the function's name ``{f}`` and the result's ``{out}``."""
    if n == 1:
        return "{f}({0}, {0}, out={0})" if ufunc is np.multiply else "{f}({0}, out={0})"
    first = f"{{f}}({{0}}, {{1}}, out={{{pos}}})"
    return first + "".join(f"; {{f}}({{out}}, {{{j}}}, out={{out}})" for j in range(2, n))


def _add_into(pos):
    """x₀ + x₁ + … added left to right (as ``ops.Add.forward``), the first sum written into x_pos (pos 0 or 1: a
    temporary of the program's own that nothing reads afterwards) and the rest added into that sum."""
    first, rest = _into(np.add, pos), _into(np.add, 0)

    def run(*xs):
        out = first(xs[0], xs[1])
        for x in xs[2:]:
            out = rest(out, x)  # out is the program's own array by now (x_pos, or a new one)
        return out
    return run


def _batch_sum_rows(a):
    """Σ over the batch of a batch of rows folded into one matrix (CompiledLedger._fold_rows): over axis 0."""
    return a.sum(axis=0, keepdims=True)


# the forms on folded rows (CompiledLedger._fold_rows) of the instructions that change there
_FOLDED = {"rows @ W": "{0} @ {1}", "Σ aᵀb": "{0}.T @ {1}", "batch sum": _batch_sum_rows}


def _square_into(a):
    if type(a) is np.ndarray and a.flags.writeable:
        return np.multiply(a, a, out=a)
    return a * a


# what writing and compiling the straight-line program costs per instruction (measured: 12–19 µs a line for 10³ to
# 10⁵ instructions); a program is written out once stepping through it has cost as much (see CompiledLedger._run)
_GENERATE_SECONDS = 20e-6

# functions that the straight-line program writes as Python's own operators (the same call of the operands'
# __add__, __mul__, …, without a function call around it; mpmath's scalar arithmetic is made of them)
_OPERATORS = {operator.add: "{0} + {1}", operator.sub: "{0} - {1}", operator.mul: "{0} * {1}",
              operator.truediv: "{0} / {1}", operator.neg: "-{0}", _square: "{0} * {0}"}

# labels of the instructions whose result may be a view of an argument (NumPy): a transpose, an entry, a slice
_VIEWS = {"Transpose", "Entry", "Slice", "Concat"}

# the ufunc an element-wise instruction's function computes, for writing it into an operand (NumPy's out=; x² as
# x · x)
_IN_PLACE = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply, operator.truediv: np.divide,
             operator.neg: np.negative, _square: np.multiply, np.tanh: np.tanh, np.exp: np.exp}
