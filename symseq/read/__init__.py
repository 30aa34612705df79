"""The one reader of printed mathematics.

Everything a page or a claim prints is read here and nowhere else: the grammar of printed arithmetic
(:mod:`symseq.read.syntax`, its terminals the one definition of a printed number, a name and an operator), the
tree it builds (:mod:`symseq.read.tree`), exact and interval evaluation of that tree
(:mod:`symseq.read.evaluate`), a claim's printed string (:mod:`symseq.read.printed`), the page scanner
(:mod:`symseq.read.page`), and a page's layout: its formats (:mod:`symseq.read.formats`: notebooks and HTML
rendered as lines), its headings, tables and code (:mod:`symseq.read.document`) and where a derivation's sections
stand on it (:mod:`symseq.read.sections`). Text is data: it is parsed, never run.
"""

from importlib import import_module

# name → module of the reader that defines it (PEP 562: importing symseq.read loads nothing until a name is used)
_LAZY = {
    **dict.fromkeys(("PrintedNumber", "read_number", "magnitude", "NUMBER", "SIGNED_NUMBER", "canonical",
                     "written_like", "is_scientific"), "number"),
    **dict.fromkeys(("Num", "Const", "Neg", "Bin", "Pow", "Call", "Vec", "Ref", "Statement", "numbers", "with_number",
                     "without_sign", "show", "computes", "result_parts", "is_number", "integer"), "tree"),
    **dict.fromkeys(("parse", "parse_statement", "formula", "name_key", "is_word", "NAME", "MAX_DEPTH",
                     "MAX_LENGTH", "RELATIONS", "FUNCTIONS"), "syntax"),
    **dict.fromkeys(("value", "interval", "flat_entries"), "evaluate"),
    **dict.fromkeys(("Printed", "read_printed", "read_array", "parse_expression", "SHAPE_FORMS"), "printed"),
    **dict.fromkeys(("Token", "WordNumber", "scan", "scan_words", "MINUS", "in_value_range",
                     "number_value"), "page"),
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
