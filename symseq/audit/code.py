"""What a page's code prints, checked against what the code computes from its own literals.

A worked example often shows a few lines of Python and, as a comment under ``print(x)``, what it printed::

    attn_weights = torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.7, 0.2], [0.4, 0.3, 0.3]])
    V = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    output = attn_weights @ V
    print(output)
    # tensor([[2.4000, 3.4000],
    #         [3.2000, 4.2000],
    #         [2.8000, 3.8000]])

The code is read with :mod:`ast` (parsed, never run) and only a small, closed set of forms is understood: a name
bound to a literal array (``torch.tensor([...])``, ``np.array([...])``, a bare list or number), to ``a @ b``,
``torch.matmul(a, b)``, ``np.dot(a, b)``, ``+ - * /`` and ``**`` of those, ``x.T``, and the softmax of a literal
vector (``F.softmax(x, dim=-1)``). Each value is the page's own tree (:mod:`symseq.read.tree`) of the printed
literals, so it is decided exactly as a statement printed in the text is: the printed output is a statement
``expression ≈ output`` at the output's lines. A print whose argument uses anything else is not read.
"""

from __future__ import annotations

import ast
import re

from ..errors import SymseqError
from ..read import Bin, Call, Neg, Num, Pow, Statement, Vec, is_number, parse, read_number
from ..read.document import Document, fences

MAX_BLOCK = 200  # lines of a code block read (bounded work)
MAX_ENTRIES = 400  # entries of a literal array read
_PYTHON = ("", "python", "py", "python3", "pycon", "ipython")  # the languages of a fence read as Python
_OUTPUT = re.compile(r"^\s*#\s*(?:tensor\(|array\(|\[|-?\d)")  # a comment showing a printed value
_ARRAY = ("tensor", "Tensor", "FloatTensor", "DoubleTensor", "array", "asarray")


def code_statements(doc: Document) -> list[tuple[Statement, list]]:
    """``(statement, spans)`` for each ``print(x)`` of a Markdown code block followed by comment lines showing its
    output, where ``x`` is one of the forms of the module docstring: the statement ``x ≈ output`` with the
    spans (line, start, end) of the print's argument and of the output (which may run over several lines)."""
    out = []
    for block in fences(doc.lines):
        if not block.closed or block.lang not in _PYTHON or len(block.body) > MAX_BLOCK:
            continue
        first = block.start + 1
        source = "\n".join(doc.lines[first - 1:block.end - 1])
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        env: dict = {}  # name -> its value's tree
        said: dict = {}  # name -> the expression it was bound to, as written
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                value = _tree(node.value, env, source)
                if value is None:
                    env.pop(name, None)
                    said.pop(name, None)
                else:
                    env[name] = value
                    said[name] = ast.get_source_segment(source, node.value) or name
            elif isinstance(node, ast.Expr) and _is_print(node.value):
                value = _tree(node.value.args[0], env, source)
                shown = _output(doc, first + node.end_lineno - 1)  # the comment lines right under the print
                if value is None or shown is None:
                    continue
                arg = node.value.args[0]
                line = first + arg.lineno - 1
                left = (line, arg.col_offset, arg.end_col_offset if arg.end_lineno == arg.lineno else len(doc.lines[line - 1]))
                printed, span, shown_text = shown
                text = ast.get_source_segment(source, arg) or "?"
                if isinstance(arg, ast.Name) and len(said.get(arg.id, "")) <= 60:
                    text = f"{arg.id} = {said[arg.id]}"  # print(output) of output = attn_weights @ V
                out.append((Statement((value, printed), ("≈",), (text, shown_text)), [left, span]))
            elif not isinstance(node, (ast.Import, ast.ImportFrom)) and not _inert(node):
                env.clear()  # a loop, a function, a call such as V.add_(1): what follows may not be what names hold
    return out


def _inert(node) -> bool:
    """A statement that changes no name: a docstring or a bare constant, or a print of several things."""
    if not isinstance(node, ast.Expr):
        return False
    v = node.value
    printed = isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "print"
    return isinstance(v, ast.Constant) or printed and not any(isinstance(a, (ast.Call, ast.NamedExpr)) for a in v.args)


def _is_print(call) -> bool:
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print"
            and len(call.args) == 1 and not call.keywords)


def _output(doc: Document, after: int):
    """The printed value shown in the comment lines right under line ``after`` (``# tensor([[…],`` then ``#  […]])``,
    the lines of one value while its brackets are open): (its tree, its span, its text without the comment marks), or
    None."""
    if after >= len(doc.lines) or not _OUTPUT.match(doc.lines[after]):
        return None
    last, depth = after, 0
    while last < len(doc.lines) and doc.lines[last].lstrip().startswith("#") and (last == after or depth > 0):
        depth += doc.lines[last].count("[") - doc.lines[last].count("]")
        last += 1
    joined = " ".join(doc.lines[after:last])
    start = joined.index("#") + 1
    body = joined[start:].replace("#", " ").strip()
    body = re.sub(r",\s*(?:dtype|device|requires_grad|grad_fn)\s*=.*$", ")", body)
    m = re.fullmatch(r"(?:tensor|array)\((.*)\)", body, re.S)
    body = m.group(1) if m else body
    try:
        node = parse(body)
    except (SymseqError, RecursionError):
        return None
    if not is_number(node):
        return None
    a = len(doc.lines[after]) - len(doc.lines[after].lstrip())
    return node, (after + 1, a, len(joined)), re.sub(r"\s*#\s*", " ", joined).strip()


def _number(node, source: str):
    """A Python number literal as the page prints it (``0.5`` is 1/2 exactly), or None."""
    neg = False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        neg, node = True, node.operand
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        return None
    text = ast.get_source_segment(source, node)
    number = read_number(text) if text else None
    if number is None:
        return None
    num = Num(number)
    return Neg(num) if neg else num


def _array(node, source: str, budget: list):
    """A literal (nested) list of numbers as a tree, or None."""
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_array(i, source, budget) for i in node.elts]
        if not items or any(i is None for i in items):
            return None
        return Vec(tuple(items))
    budget[0] -= 1
    return _number(node, source) if budget[0] >= 0 else None


def _name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _tree(node, env: dict, source: str):
    """The page tree of a Python expression of the forms the module docstring lists, or None."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, (ast.Constant, ast.UnaryOp)) and (n := _number(node, source)) is not None:
        return n
    if isinstance(node, (ast.List, ast.Tuple)):
        return _array(node, source, [MAX_ENTRIES])
    if isinstance(node, ast.Attribute) and node.attr == "T":
        x = _tree(node.value, env, source)
        return _transpose(x)
    if isinstance(node, ast.BinOp):
        a, b = _tree(node.left, env, source), _tree(node.right, env, source)
        if a is None or b is None:
            return None
        op = {ast.MatMult: "@", ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(node.op))
        if op is not None:
            return Bin(op, a, b)
        if isinstance(node.op, ast.Pow):
            return Pow(a, b)
        return None
    if isinstance(node, ast.Call) and not any(k.arg not in ("dim", "axis", "dtype") for k in node.keywords):
        name = _name(node.func)
        if name in _ARRAY and len(node.args) == 1:
            return _array(node.args[0], source, [MAX_ENTRIES])
        if name in ("matmul", "dot", "mm") and len(node.args) == 2:
            a, b = (_tree(x, env, source) for x in node.args)
            return Bin("@", a, b) if a is not None and b is not None else None
        if name == "softmax" and len(node.args) == 1:
            x = _tree(node.args[0], env, source)
            last = all(_last_axis(k.value) for k in node.keywords if k.arg in ("dim", "axis"))
            if isinstance(x, Vec) and last and all(not isinstance(i, Vec) for i in x.items):
                return Call("softmax", x)
            if isinstance(x, Vec) and last and all(isinstance(i, Vec) for i in x.items):
                return Vec(tuple(Call("softmax", row) for row in x.items))
    return None


def _last_axis(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and node.operand.value == 1


def _transpose(x):
    if not isinstance(x, Vec) or not x.items or not all(isinstance(r, Vec) for r in x.items):
        return None
    width = len(x.items[0].items)
    if any(len(r.items) != width for r in x.items):
        return None
    return Vec(tuple(Vec(tuple(r.items[j] for r in x.items)) for j in range(width)))
