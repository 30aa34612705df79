"""numba backend: a compiled ledger of scalar rows as one machine-code loop over the batch.

``compile(L, outputs, backend="numba")`` builds the same straight-line program
as the NumPy backend (:mod:`symseq.backends.compiled`: rows shared, exact 0 and
1 folded), then writes it as the Python source of one ``@njit`` function::

    def program(n, a0, a1, ..., o0, o1, ...):
        for i in range(n):
            v5 = a0 * a4[i]            # an input with a batch axis is read at i, a parameter as is
            v6 = _tanh(v5)
            ...
            o0[i] = v17                # an output per example
            o1[i] = v27                # a gradient summed over the batch afterwards (batch_reduce)

so every intermediate of an example stays in registers: one pass over the
batch instead of one array pass per instruction (with no batched input, the
same body without the loop). The loop has no call into a
library and no reduction, so LLVM vectorises it (2, 4 or 8 examples per
instruction: SSE2, AVX2, AVX-512): tanh is :func:`tanh_f64`, plain arithmetic
(the C library's scalar tanh, about 50 ns a call, kept the loop scalar), and a
gradient summed over the batch is written per example and summed afterwards
by NumPy (pairwise; a running sum in the loop is a serial dependence that LLVM
may not reorder without fast-math). The loop reads every batched input and
writes every output, so LLVM checks at run time that they do not overlap, one
check per pair; its default cap of 128 checks left a long sequence (T = 100:
101 inputs, 4 outputs) scalar, so the cap is raised while this backend
compiles (the LLVM option ``-vectorize-memory-check-threshold``, LLVM ≥ 15)
and put back after. Two more settings keep the vector loop fast. The loop
index is unsigned (``n`` is typed uint64): numba wraps a negative signed index
around (``i + len`` if ``i < 0``), which LLVM could not rule out here, so every
read was a gather and every write a scatter. And one example is a single
chain of dependent operations T tanh long (the forward sweep, then the
backward one), far longer than the processor's out-of-order window, so the
loop runs at the latency of that chain, not at the arithmetic throughput: 8
examples per vector (one AVX-512 register, or two AVX2 ones) and 8 vectors
interleaved per iteration (``-force-vector-width=8``,
``-force-vector-interleave=8``, set only while compiling, like the cap) give
64 independent chains for the processor to overlap (T = 100, batch 10⁴: 12 ms
a call with the cost model's choice, 3.4 ms with 16 chains on one Xeon with
AVX-512; on another, compiled side by side in one process and called in
turn, medians of 25 calls: 16.7 ms with 16 chains, 9.6 ms with 64, 10.0 ms
with 64 when compiled for AVX2; the arithmetic of each example, hence every
bit of the result, is unchanged). LLVM pays for the 64 chains in compile
time, on the first call for each set of batched inputs: 2.1 s at T = 16 and
24 s at T = 100 on that second machine, where 8 vectors interleaved took
about four times as long to compile as 2. exp, log, sigmoid and
the other functions still call the C library, one element at a time (the
bundled scalar ledgers use tanh only). The source is generated from the
program's own instruction list — the op of each instruction
(``compiled._op``: add, sub, mul, a power with an integer or ±½ exponent, a
named function) and float constants written with ``repr`` — never from text of
a document or a user, and it is compiled by numba, not ``exec``-ed as Python
on data. ``f.numba_source(pattern)`` shows it.

Exact to float64 (IEEE double; no fast-math and no contraction of the
program's arithmetic into fused multiply-adds, so the order of operations is
the program's; only tanh's polynomials use explicit ones): results agree
with the NumPy and torch backends to rounding (tanh within 2 ulp, see
:func:`tanh_f64`; exp and log come from the C math library, within an ulp or
so of NumPy's vector routines). Division by zero gives ±inf or nan
as in NumPy (``error_model="numpy"``), which the output check then reports with
the row at fault, as for the other backends.

What it accepts: ledgers whose needed rows and leaves are all scalars, with
the elementary functions of :mod:`symseq.functions` that have one argument
(tanh, exp, log, sigmoid, relu, Heaviside, sin, cos, sinh, cosh, tan, abs, erf,
sqrt and integer powers) and Max/Min; softmax/logsumexp of scalars raises
:class:`~symseq.errors.ConventionError` naming it (use ``backend="numpy"``).
A ledger with a matrix row is compiled by :mod:`symseq.backends.numba_matrix`
instead: one function of two-dimensional arrays on a batch of rows folded into
one matrix. numba is an optional extra (``pip install
'symseq[numba]'``); without it :class:`~symseq.errors.BackendUnavailable` says
so.

Source: numba documentation, "Compiling Python code with @jit" and
"Supported Python features" (``math`` and NumPy ufuncs on scalars,
``error_model``); LLVM, "Auto-Vectorization in LLVM" (runtime checks of
pointers, if-conversion, reductions).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
import sympy as sp

from ..errors import ConventionError, LedgerError, import_optional
from .compiled import CompiledLedger, _Compiler, requested
from .numpy_backend import NumpyKernel

# name of the function in symseq.functions / SymPy -> its float64 code (a format with {0}, {1} for arguments)
_CALLS = {
    "tanh": "_tanh({0})", "exp": "np.exp({0})", "log": "_log({0})", "sinh": "np.sinh({0})",
    "cosh": "np.cosh({0})", "sin": "np.sin({0})", "cos": "np.cos({0})", "tan": "np.tan({0})",
    "abs": "abs({0})", "erf": "math.erf({0})", "sigmoid": "_sigmoid({0})", "relu": "max({0}, 0.0)",
    "heaviside": "_heaviside({0}, {1})",
}


def _fused_multiply_add(numba):
    """fma(a, b, c) = a·b + c rounded once (IEEE 754 fusedMultiplyAdd), as LLVM's ``llvm.fma`` intrinsic: one
    instruction where the processor has FMA (x86-64 since Haswell and Zen, AArch64), a correctly rounded library
    call elsewhere; the same bits either way, vectorised or not. Written by hand only inside :func:`tanh_f64`:
    the program's own arithmetic is never contracted."""
    from numba.extending import intrinsic

    f64 = numba.types.float64

    @intrinsic
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return builder.fma(*args)

        return f64(f64, f64, f64), codegen

    return fma


_SHIFTER = 6755399441055744.0  # 1.5·2⁵²: y + 1.5·2⁵² rounds y to an integer, held in the low bits


@functools.cache
def tanh_f64():
    """The Python function ``tanh(x)`` for one float64, in plain arithmetic that LLVM vectorises (no call into a
    library), for numba to compile (the program's loop inlines it; ``numba.vectorize`` makes a ufunc of it).

    Equation: with a = |x| and E = e^{2a} − 1, tanh(a) = E/(E + 2) for every a, and tanh(x) = sign(x) tanh(|x|).
    e^y, y = 2a (at most 44: tanh is 1 to the last bit from |x| = 19.1 on), is 2^n (1 + p) with y = n ln 2 + r
    (Cody–Waite reduction, |r| ≤ ln(2)/2; n is y/ln 2 rounded by adding and subtracting 1.5·2⁵², whose sum also
    holds n in its low bits, from which 2^n is written into the exponent bits) and p = e^r − 1 = r + r² H(r),
    H (degree 9) a Chebyshev fit (``mpmath.chebyfit`` at 60 digits, within 1.1e-16) of (e^r − 1 − r)/r² on
    [−ln(2)/2, ln(2)/2], evaluated by Horner's scheme in fused multiply-adds. Then E = 2^n p + (2^n − 1). The
    quotient is computed as t = E·(1/D), D = E + 2, and corrected once: t + ((E + E_lo) − t (D + D_lo))/D, where
    D_lo = E − (D − 2) is what the sum D lost (exactly, while E < 2⁵³: D − 2 is then a multiple of D's last place
    below D) and E_lo = 2^n ((r² H(r) + r) − p) what p's rounding lost, so the rounding of D, of the quotient and
    of p no longer add up. ±0 keep their sign, ±inf give ±1, nan gives nan.

    Accuracy: within 2 ulp of tanh everywhere; against mpmath at 40 digits, max 1.52 ulp on the 1.3·10⁵ points of
    ``tests/test_numba_tanh.py`` (5e-324 to 1.8e308) and 1.57 ulp on 2·10⁶ uniform points in [0, 20], both near
    |x| = 0.22, where n = 1 and r < 0 (what remains is the rounding of r and of E, which the correction does not
    see); within 1 ulp of 1 from |x| = 18.4, where E ≥ 2⁵³; correctly rounded below |x| = 1e-8 (tanh x = x
    there); |tanh| ≤ 1, so 1 − tanh² (the derivative rows) is never negative; monotone on the points tested.

    Speed: the form E/(E + 2) with its correction needs no second polynomial for small |x|. The one it replaces
    (Cephes': a + a s G(s), s = a², G of degree 10 below 0.625, 1 − 2/(e^{2a} + 1) above, both computed in a
    vector; max 1.27 ulp) was slower: on the T = 100 scalar RNN, batch 10⁴, in one process each and alternating
    with torch autograd, 0.25× torch (3.2 ms) against 0.21× (2.8 ms) now. Without the correction (t = E/(E + 2)
    alone) it was as fast but 2.3 ulp off; the correction with a two-sum of D that stays exact above |x| = 18.4
    (a compare and a select more), or with E's own rounding carried too (1.29 ulp), were 0.23× and 0.24×. Every
    operation is IEEE-rounded, so the bits are the same whether the loop runs vectorised or not.

    Returns:
        a Python function of one float64 (``x``, in the numba backend's loop: one example's value) returning a
        float64; its ``fma`` is numba's, so it runs compiled only. Made once per process.

    Raises:
        BackendUnavailable: numba is not installed.

    Source: tanh = E/(E + 2) with E = expm1(2|x|) as in SLEEF's ``xtanh_u35`` (bound 3.5 ulp, without a
    correction); the reduction of exp is fdlibm's ``e_exp.c``; the 1.5·2⁵² rounding as in SLEEF and glibc's
    vector exp; the correction of a quotient by its exact remainder (fma(−t, D, E)) and the rounding error D_lo
    of a sum are error-free transformations (Dekker's Fast2Sum; Muller et al., Handbook of Floating-Point
    Arithmetic, ch. 4).
    """
    fma = _fused_multiply_add(import_numba())

    def tanh(x):
        a = abs(x)
        y = 2.0 * a
        y = 44.0 if y > 44.0 else y  # nan stays nan; ±inf become 44
        k = fma(y, 1.4426950408889634, _SHIFTER)  # 1.5·2⁵² + n, n = y / ln 2 rounded to the nearest integer
        n = k - _SHIFTER
        r = fma(-n, 6.93147180369123816490e-01, y)  # fdlibm's ln 2 in two parts: y − n·ln2_hi is exact
        r = fma(-n, 1.90821492927058770002e-10, r)
        # H(r), Horner's scheme: with 64 examples in flight the loop is bound by the number of operations, not
        # by the length of one chain
        q = fma(2.5100375832561234e-08, r, 2.7620075879983367e-07)
        q = fma(q, r, 2.7557268480310024e-06)
        q = fma(q, r, 2.4801521322368692e-05)
        q = fma(q, r, 0.00019841269863040545)
        q = fma(q, r, 0.0013888888917196719)
        q = fma(q, r, 0.008333333333330065)
        q = fma(q, r, 0.041666666666624164)
        q = fma(q, r, 0.16666666666666669)
        q = fma(q, r, 0.5000000000000001)
        # 2^n, 0 ≤ n ≤ 64: the low 12 bits of k's bits + 1023 are n + 1023 (1.5·2⁵²'s low 12 bits are 0)
        scale = np.int64((np.float64(k).view(np.int64) + 1023) << 52).view(np.float64)
        rr = r * r
        p = fma(rr, q, r)  # e^r − 1
        p_lo = fma(rr, q, r - p)  # what rounding p lost (r − p is exact: p/r lies in [0.84, 1.19])
        E = fma(scale, p, scale - 1.0)  # e^y − 1
        E_lo = scale * p_lo
        D = E + 2.0
        D_lo = E - (D - 2.0) + E_lo
        rD = 1.0 / D
        t = E * rD
        residual = fma(-t, D_lo, fma(-t, D, E)) + E_lo  # (E + E_lo) − t (D + D_lo); fma(−t, D, E) is exact
        t = fma(residual, rD, t)
        return math.copysign(t, x)

    return tanh


def input_names(f: CompiledLedger, batched) -> frozenset:
    """``batched`` (the names of the inputs a call gives with batch axes, one name or a list) as a set of names.

    Raises:
        LedgerError: ``batched`` is not a name or a list of names, or names something the compiled ledger ``f``
            does not read (names what it reads).
    """
    names = (batched,) if isinstance(batched, str) else batched
    try:
        names = frozenset(names)
    except TypeError:
        raise LedgerError(f"batched names the inputs given with batch axes, as a list of names such as ['x_0', 'y']; "
                          f"got {batched!r}") from None
    unknown = sorted(map(str, names - set(f.program.inputs)))
    if unknown:
        raise LedgerError(f"{', '.join(unknown)} in batched: not an input of the compiled ledger, which reads "
                          f"{', '.join(f.program.inputs) or 'nothing'}")
    return names


def import_numba():
    """Import numba or raise a clear error naming the extra to install (:func:`symseq.errors.import_optional`)."""
    return import_optional("numba", needed_by="the numba backend",
                           otherwise="backend='numpy' computes the same program without it")


@functools.cache
def _helpers(numba):
    """The compiled functions a program's loop calls (tanh, sigmoid, Heaviside, log), made once per process: numba
    compiles each for its argument types once, not again for every compiled ledger."""
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

    return {"_sigmoid": _sigmoid, "_heaviside": _heaviside, "_log": _log,
            "_tanh": numba.njit(cache=False, error_model="numpy")(tanh_f64())}


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
        self._compiled: dict = {}  # frozenset of batched input names -> (njit function, inputs, outputs)
        for i, (out, fn, args, label) in enumerate(program.instructions):  # refuse now, not at the first call
            if out not in program.ops:
                raise ConventionError(f"the numba backend compiles scalar instructions only; {label} is not one: "
                                      f"use backend='numpy'")
            _code(program.ops[out], [f"v{a}" for a in args], label)

    def numba_source(self, batched=()) -> str:
        """The Python source of the loop when the inputs named in ``batched`` (a list of names) come with a batch
        axis.

        Raises:
            LedgerError: ``batched`` is not a list of names of the program's inputs (names what it reads).
        """
        return self._source(frozenset(self.program.inputs[n] for n in input_names(self, batched)))[0]

    def _source(self, batched: frozenset):
        p = self.program
        ins = sorted(p.inputs.values())
        reduced = self._reduced_slots()
        per_example = [s for s in dict.fromkeys(p.outputs.values()) if s not in reduced]
        per_example_out = [s for s in per_example if s not in p.inputs.values() and s not in p.constants]
        red = [s for s in dict.fromkeys(p.outputs.values()) if s in reduced]
        head = [f"a{s}" for s in ins] + [f"o{s}" for s in per_example_out + red]
        lines = [f"def program(n, {', '.join(head)}):"]
        for s in ins:
            if s not in batched:
                lines.append(f"    v{s} = a{s}")
        for s, c in p.constants.items():
            lines.append(f"    v{s} = {_literal(c)}")
        # no input with a batch axis: one example, straight-line code (no loop for LLVM to vectorise, which
        # at the length of a long trajectory costs seconds of compiling)
        pad, i = ("        ", "i") if batched else ("    ", "0")
        if batched:
            lines.append("    for i in range(n):")
        for s in ins:
            if s in batched:
                lines.append(f"{pad}v{s} = a{s}[i]")
        for out, fn, args, label in p.instructions:
            lines.append(f"{pad}v{out} = {_code(p.ops[out], [f'v{a}' for a in args], label)}")
        for s in per_example_out + red:  # a reduced gradient per example too: summed by NumPy after the loop
            lines.append(f"{pad}o{s}[{i}] = v{s}")
        return "\n".join(lines) + "\n", ins, per_example_out, red

    def _reduced_slots(self) -> set:
        if not self.batch_reduce:
            return set()
        L = self.ledger
        return {s for n, s in self.program.outputs.items()
                if L[n].kind == "adjoint" and L[L[n].adjoint_of].kind == "parameter"}

    def _function(self, names: frozenset):
        """The compiled loop for calls with the inputs ``names`` batched: (njit function, (slot, batched) per
        argument, per-example outputs, outputs summed after the loop); compiled on the first such call."""
        hit = self._compiled.get(names)
        if hit is None:
            batched = frozenset(self.program.inputs[n] for n in names)
            src, ins, outs, red = self._source(batched)
            scope = {"np": np, "math": math, **self._helpers}
            code = compile(src, f"<symseq numba program of {self.ledger.title or 'a ledger'}>", "exec")
            exec(code, scope)  # our own instruction list as source (see the module docstring), no user text
            nb = self.numba
            f64 = nb.types.float64
            column = nb.types.Array(f64, 1, "C", readonly=True)  # a batched input (a writable array converts)
            # n unsigned, so is the loop index: a[i] then has no wraparound for a negative i (see the module
            # docstring), and LLVM reads and writes whole vectors instead of gathering and scattering
            signature = (nb.types.uint64, *(column if s in batched else f64 for s in ins),
                         *(nb.types.float64[::1] for _ in outs + red))
            with _vectoriser_options():  # compiled now, for these types, with the options set
                fn = nb.njit(signature, error_model="numpy", fastmath=False, boundscheck=False,
                             parallel=False)(scope["program"])
            hit = self._compiled[names] = (fn, [(s, s in batched) for s in ins], outs, red)
        return hit

    def _run(self, slots: list, batch: dict) -> list:
        lead = next(iter(batch.values())) if batch else ()
        n = int(np.prod(lead)) if lead else 1
        fn, ins, outs, red = self._function(frozenset(batch))
        args = []
        for s, batched in ins:
            v = slots[s]
            if batched:
                v = v.reshape(-1)  # a float64 array (the kernel's from_user)
                flags = v.flags
                if not (flags.c_contiguous and flags.aligned):
                    v = np.ascontiguousarray(v)
            else:
                v = float(v.reshape(-1)[0])
            args.append(v)
        bufs = [np.empty(n) for _ in outs + red]
        fn(np.uint64(n), *args, *bufs)
        out = list(slots)
        for s, b in zip(outs, bufs):
            out[s] = b.reshape(lead + (1, 1))
        for s, b in zip(red, bufs[len(outs):]):
            out[s] = np.full((1, 1), np.sum(b))  # pairwise summation
        return out


@contextlib.contextmanager
def _vectoriser_options():
    """Set LLVM's loop-vectoriser options for the program's loop while inside; put back LLVM's defaults after.

    ``-vectorize-memory-check-threshold`` (default 128): the cap on the runtime pointer-overlap checks of a
    vectorised loop. The loop reads every batched input and writes every output, so vectorising it needs
    (inputs × outputs) checks, run once per call; above the cap LLVM leaves the loop scalar.
    ``-force-vector-width=8`` and ``-force-vector-interleave=8`` (defaults 0: the cost model's choice, here 4 and
    1 on AVX-512): 64 examples per iteration, as independent chains of dependent operations that the processor
    overlaps; with fewer the loop waits on the latency of the chains (the module docstring).
    The options are process-wide in LLVM, so they are set only while this backend compiles.
    Only for LLVM ≥ 15, where the first option exists (an unknown option would end the process).
    """
    import llvmlite.binding as llvm

    if llvm.llvm_version_info < (15,):  # pragma: no cover - older llvmlite
        yield
        return
    options = {"-vectorize-memory-check-threshold": (1000000, 128), "-force-vector-width": (8, 0),
               "-force-vector-interleave": (8, 0)}
    for name, (value, _) in options.items():
        llvm.set_option("symseq", f"{name}={value}")
    try:
        yield
    finally:
        for name, (_, default) in options.items():
            llvm.set_option("symseq", f"{name}={default}")


def compile_numba(ledger, outputs, *, inputs=None, device=None, dtype=None, batch_reduce=None) -> CompiledLedger:
    """Compile the rows needed for ``outputs`` into one numba loop over the batch (see the module docstring).

    Args:
        ledger: a :class:`~symseq.ledger.Ledger`; when a needed row or leaf is a matrix, the program is compiled as
            one function on folded rows (:mod:`symseq.backends.numba_matrix`).
        outputs: row or adjoint names to return; each comes back with the batch's leading shape (or as a float
            when no input has a batch axis), a parameter's gradient summed (``batch_reduce="sum"``) or averaged
            (``"mean"``) over the batch.
        inputs: leaves that may be given at call time (default all); the others are compiled in.

    Raises:
        ConventionError: an instruction or function the backend does not compile, or a device or dtype other
            than the CPU and float64 (names what was given).
        BackendUnavailable: numba is not installed.
        LedgerError: an output or input that is not in the ledger.
    """
    import_numba()
    if device not in (None, "cpu"):
        raise ConventionError(f"the numba backend runs on the CPU; got device={device!r} (use backend='torch')")
    if dtype not in (None, np.float64, "float64"):
        raise ConventionError(f"the numba backend computes in float64; got dtype={dtype!r} (leave dtype unset)")
    outputs, inputs = requested(ledger, outputs, inputs)
    k = NumpyKernel(np.float64, backend="numba")
    if any(ledger[n].shape != () for n in ledger.needed(outputs)):  # one function on folded rows
        from .numba_matrix import NumbaMatrixLedger

        program = _Compiler(ledger, k, inputs, reduce_params=batch_reduce is not None, in_place=False).build(outputs)
        return NumbaMatrixLedger(ledger, program, k, outputs, batch_reduce)
    program = _Compiler(ledger, k, inputs, straight=True).build(outputs)
    return NumbaLedger(ledger, program, k, outputs, batch_reduce)
