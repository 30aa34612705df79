"""Read what a handout prints: decimals, vectors, matrices, shapes and exact formulas.

A claim's printed string is parsed, never run (no ``eval`` or ``sympify``):
text from a handout is data. It understands the forms the handouts use:

* decimals and integers, kept exact with their printed precision:
  ``0.792412``, ``-1.09``, ``−0.99``, ``1e-3``;
* vectors and matrices: ``(0,4)``, ``[0.8,0.4]``, ``[2,0.6 | 0.6,2]``,
  ``[[1,0],[w,1-w]]`` and LaTeX ``\\begin{array}{cc}1/\\sqrt{2} & -\\infty \\\\ 0 & 1\\end{array}``;
* arrays as NumPy and PyTorch print them: ``array([[0.1, 0.2], [0.3, 0.4]])``, ``[[0.1 0.2]\\n [0.3 0.4]]``,
  ``tensor([0.2500, 1.0000], grad_fn=<AddBackward0>)`` (:func:`read_array`);
* shapes: ``4×3``, ``T×d_k``, ``h d_v \\times d``, ``(4, 3)``, ``[4, 3]``, ``torch.Size([4, 3])``
  (:data:`SHAPE_FORMS`);
* formulas over declared names: ``1/(1+e^{1/√2})``, ``1/[1+e^{2w-1}]``,
  ``\\frac{1}{\\sqrt{2}}``, ``\\tfrac25`` (LaTeX's one-token arguments), ``I/√2``,
  ``3D^2``, ``T^2 d_k``, ``0.364²``, ``sin(1)``, ``1×1.131+1×0`` (× multiplies in a formula), read by the
  grammar of the page's own arithmetic (:func:`symseq.read.syntax.formula`).

Names not declared by the claim are an error that names them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sympy as sp

from ..errors import ClaimError
from .number import PrintedNumber, read_number
from .page import _SPACING, split_top

@dataclass
class Printed:
    """A parsed printed string: ``kind`` is number, vector, matrix, expr or shape."""

    text: str
    kind: str
    entries: list = field(default_factory=list)  # PrintedNumber or sympy expr, row-major
    shape: tuple = ()

    @property
    def approximate(self) -> bool:
        """Whether a printed entry is a rounded value: a decimal, or a percentage (printed to its digits)."""
        return any(isinstance(e, PrintedNumber) and (e.has_point or e.percent) for e in self.entries)


def parse_expression(text: str, names: dict | None = None):
    """Parse a printed formula into an exact SymPy expression over ``names``, with the page's grammar
    (:func:`symseq.read.syntax.formula`, the one reader of printed arithmetic).

    Raises:
        ClaimError: naming the string and the part that could not be read.
    """
    from .syntax import formula

    return formula(text, names)


# ---------------------------------------------------------------------------
# printed strings
# ---------------------------------------------------------------------------

_ENV = re.compile(r"\\begin\{(array|pmatrix|bmatrix|matrix)\}(\{[^}]*\})?(.*)\\end\{\1\}", re.S)


def _strip_outer(text: str) -> tuple[str, bool]:
    t = text.strip()
    for a, b in (("\\left(", "\\right)"), ("\\left[", "\\right]"), ("(", ")"), ("[", "]")):
        if t.startswith(a) and t.endswith(b):
            inner = t[len(a): -len(b)]
            depth = 0
            ok = True
            for ch in inner:
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth < 0:
                    ok = False
                    break
            if ok and depth == 0:
                return inner, True
    return t, False


def _entry(text: str, names: dict):
    n = read_number(text)
    if n is not None:
        return n
    return parse_expression(text, names)


def read_printed(text: str, names: dict | None = None, *, shape: bool = False) -> Printed:
    """Parse a claim's printed string (see the module docstring for the forms).

    Raises:
        ClaimError: naming the string when it cannot be read.
    """
    if not isinstance(text, str) or not text.strip():
        raise ClaimError(f"a claim needs the printed string as the handout prints it; got {text!r}")
    names = names or {}
    t = text.strip().strip("$").strip()
    if "\\" in t and "\\\\" not in t:  # LaTeX's spacing marks (\, \; \ \quad) between entries: not part of them
        t = _SPACING.sub(" ", t).strip()
    if shape:
        return Printed(text, "shape", *_shape_dims(text, t, names))
    n = read_number(t)
    if n is not None:
        return Printed(text, "number", [n], ())
    array = read_array(text, t)
    if array is not None:
        return array
    env = _ENV.search(t)
    if env or "\\\\" in t:
        body = env.group(3) if env else t
        rows = [r for r in re.split(r"\\\\", body) if r.strip()]
        grid = [[_entry(c, names) for c in r.split("&")] for r in rows]
        return _grid(text, grid)
    inner, bracketed = _strip_outer(t)
    if bracketed:
        rows = split_top(inner, (";", "|")) if (";" in inner or "|" in inner) else None
        if rows and len(rows) > 1 and "|" in inner and ";" not in inner:
            flat = [e for r in rows for e in split_top(r, (",",))]  # [a,b | c,d]: side by side
            return Printed(text, "vector", [_entry(e, names) for e in flat], (1, len(flat)))
        if rows and len(rows) > 1:
            grid = [[_entry(c, names) for c in split_top(r, (",",))] for r in rows]
            return _grid(text, grid)
        items = split_top(inner, (",",))
        if len(items) > 1 or bracketed and all(_strip_outer(i)[1] for i in items):
            if all(_strip_outer(i.strip())[1] and "," in i for i in items):
                grid = [[_entry(c, names) for c in split_top(_strip_outer(i.strip())[0], (",",))] for i in items]
                return _grid(text, grid)
            return Printed(text, "vector", [_entry(i, names) for i in items], (1, len(items)))
    e = parse_expression(t, names)
    if isinstance(e, sp.MatrixBase):  # a formula over matrices, such as I/√2
        return Printed(text, "matrix", list(e), e.shape)
    return Printed(text, "expr", [e], ())


SHAPE_FORMS = ("4×3", "4 x 3", r"4 \times 3", "T×d_k", "[4, 3]", "(4, 3)", "torch.Size([4, 3])", r"\mathbb R^{T\times D}")
"""The printed forms of a shape :func:`read_printed` reads (``shape=True``): sizes joined by ×, x or \\times, a
list or tuple as NumPy's ``.shape`` prints it, PyTorch's ``torch.Size([...])``, and the real space a matrix
lies in (``\\mathbb R^{T\\times D}``, ``ℝ^{4×3}``); a size is an integer or a
symbol given by ``dims``."""

_REAL_SPACE = re.compile(r"^(?:\\mathbb\s*\{?\s*R\s*\}?|ℝ)\s*\^\s*(?:\{(.*)\}|(\S+))$", re.S)
_TORCH_SIZE = re.compile(r"^torch\.Size\(\s*(\[.*\])\s*\)$", re.S)


def _shape_parts(text: str, t: str) -> list[str]:
    """The sizes of a printed shape (see :data:`SHAPE_FORMS`), as strings.

    Raises:
        ClaimError: for any other form, listing the accepted ones.
    """
    space = _REAL_SPACE.match(t)
    if space:  # \mathbb R^{T\times D}: the shape of a member of that space
        t = space.group(1) or space.group(2)
    m = _TORCH_SIZE.match(t)
    inner, bracketed = _strip_outer(m.group(1) if m else t)
    if bracketed:  # [3, 4], (3, 4), (3,) as NumPy prints a 1-D shape
        parts = split_top(inner, (",",))
        if parts and not parts[-1].strip() and len(parts) > 1:
            parts = parts[:-1]
    else:
        joined = re.sub(r"(?<=\d)\s*[xX]\s*(?=\d)", "×", t.replace("\\times", "×").replace(" x ", "×"))
        parts = split_top(joined, ("×",))
        if len(parts) < 2:
            parts = []
    if not parts or any(not p.strip() for p in parts):
        raise ClaimError(f"cannot read the shape {text!r}: write it as the page prints it, in one of the forms "
                         f"{', '.join(repr(f) for f in SHAPE_FORMS)} (a size is an integer, or a name given by "
                         f"dims=)")
    return parts


def _shape_dims(text: str, t: str, names: dict) -> tuple[list, tuple]:
    """The sizes of a printed shape as integers (a name's size from ``names``), and the shape of that list.

    Raises:
        ClaimError: a form :data:`SHAPE_FORMS` does not list, or a size that is no positive integer.
    """
    forms = f"write it as the page prints it, in one of the forms {', '.join(repr(f) for f in SHAPE_FORMS)}"
    dims = []
    for part in _shape_parts(text, t):
        try:
            d = parse_expression(part, names)
        except ClaimError as exc:
            raise ClaimError(f"cannot read the shape {text!r}: {exc}; {forms} (a size is an integer, or a name "
                             f"given by dims=)") from None
        d = sp.sympify(d) if isinstance(d, int) else d  # a size given by dims= as a Python int
        if not (isinstance(d, sp.Integer) and d >= 0):
            raise ClaimError(f"cannot read the shape {text!r}: the size {part.strip()!r} is {d}, not a whole number "
                             f"of rows or columns")
        dims.append(d)
    return dims, (len(dims),)


# ---------------------------------------------------------------------------
# arrays as NumPy and PyTorch print them
# ---------------------------------------------------------------------------

_WRAPPED = re.compile(r"^(array|np\.array|numpy\.array|tensor|torch\.tensor|np\.float(?:16|32|64)|"
                      r"np\.int(?:8|16|32|64)|numpy\.float64)\((.*)\)$", re.S)
_SUFFIXES = ("dtype", "grad_fn", "requires_grad", "device")
_ARRAY_TOKEN = re.compile(r"\s*(?:(?P<open>\[)|(?P<close>\])|(?P<comma>,)|(?P<num>[^\s,\[\]]+))")
_SPACED = re.compile(r"[\d.]\s+[-+−]?(?:\d|\.\d|nan|inf)")


def read_array(text: str, t: str) -> Printed | None:
    """An array printed the way NumPy or PyTorch print it, as one value; None when ``t`` is not one.

    Reads ``array([[0.1, 0.2], [0.3, 0.4]])`` (NumPy's repr, over several lines too), ``[[0.1 0.2]\\n [0.3 0.4]]``
    (NumPy's ``print``: entries apart by spaces), ``tensor([[0.1000, 0.2000], [0.3000, 0.4000]])`` with any of
    the suffixes ``dtype=...``, ``grad_fn=<...>``, ``requires_grad=True``, ``device=...`` (PyTorch's print),
    ``tensor(0.5000)`` and ``np.float64(0.5)`` (a scalar). Each entry keeps its printed digits (``0.1000``
    holds to four decimals; NumPy's ``1.`` is 1 to no decimals). The text is read by a tokenizer of brackets,
    commas and numbers, never run: a one-dimensional array is a 1×n row, two dimensions a matrix.

    Raises:
        ClaimError: an array with elided entries (``...``), a ``nan`` or ``inf`` entry, rows of different
            lengths, more than two dimensions, or an unknown suffix (the message says what was expected).
    """
    m = _WRAPPED.match(t)
    if m:
        parts = split_top(m.group(2), (",",))
        body, extra = parts[0].strip(), [p.strip() for p in parts[1:] if p.strip()]
        for p in extra:
            key = p.split("=", 1)[0].strip()
            if "=" not in p or key not in _SUFFIXES:
                raise ClaimError(f"cannot read the array {text!r}: after the entries expected only "
                                 f"{', '.join(k + '=...' for k in _SUFFIXES)} as NumPy and PyTorch print them; "
                                 f"found {p!r}")
    elif re.match(r"^(array|tensor|np\.|numpy\.|torch\.tensor)\s*\(", t):
        raise ClaimError(f"cannot read the array {text!r}: expected array(...), tensor(...) or np.float64(...) "
                         f"with balanced brackets, as NumPy and PyTorch print them")
    elif t.startswith("[") and t.endswith("]") and _SPACED.search(t) and not re.search(r"[A-Za-z_\\{}|;]", t.replace(
            "nan", "").replace("inf", "").replace("e", "")):
        body = t  # NumPy's print: [[0.1 0.2]\n [0.3 0.4]]
    else:
        return None
    if "..." in body or "…" in body:
        raise ClaimError(f"cannot read the array {text!r}: NumPy or PyTorch left entries out ('...'); claim the "
                         f"entries the page prints one by one (s.table), or print the whole array "
                         f"(np.set_printoptions(threshold=...), torch.set_printoptions(profile='full'))")
    nested = _nested(text, body)
    if not isinstance(nested, list):
        return Printed(text, "number", [nested], ())
    if all(not isinstance(x, list) for x in nested):
        return Printed(text, "vector", nested, (1, len(nested)))
    if not all(isinstance(r, list) and all(not isinstance(x, list) for x in r) for r in nested):
        raise ClaimError(f"cannot read the array {text!r}: it has more than two dimensions (or mixes rows and "
                         f"numbers); claim one matrix of it at a time")
    return _grid(text, nested)


def _nested(text: str, body: str):
    """The nested lists of printed numbers of an array's body (``[[0.1, 0.2], [0.3, 0.4]]``, or one number)."""
    stack, out, pos = [[]], None, 0
    body = body.strip()
    while pos < len(body):
        m = _ARRAY_TOKEN.match(body, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        if m.group("open"):
            stack.append([])
        elif m.group("close"):
            if len(stack) < 2:
                raise ClaimError(f"cannot read the array {text!r}: a ']' closes no '['")
            row = stack.pop()
            stack[-1].append(row)
        elif m.group("num"):
            stack[-1].append(_array_entry(text, m.group("num")))
    if body[pos:].strip() or len(stack) != 1 or len(stack[0]) != 1:
        raise ClaimError(f"cannot read the array {text!r}: expected one bracketed array of numbers (or one number) "
                         f"as NumPy or PyTorch print it")
    out = stack[0][0]
    return out


def _array_entry(text: str, tok: str) -> PrintedNumber:
    n = read_number(tok)
    if n is None:
        what = "a nan or inf entry is no value a page can claim" if tok.strip("+-−").lower() in ("nan", "inf") \
            else f"{tok!r} is not a number"
        raise ClaimError(f"cannot read the array {text!r}: {what}")
    return n


def _grid(text, grid):
    widths = {len(r) for r in grid}
    if len(widths) != 1:
        raise ClaimError(f"cannot read the matrix {text!r}: its rows have different lengths {sorted(widths)}")
    return Printed(text, "matrix", [e for r in grid for e in r], (len(grid), widths.pop()))
