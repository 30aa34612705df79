"""The one reader of printed mathematics.

Everything a page or a claim prints is read here and nowhere else: the grammar of printed arithmetic
(:mod:`symseq.read.parse`, its terminals the one definition of a printed number, a name and an operator), the
tree it builds (:mod:`symseq.read.tree`), exact and interval evaluation of that tree
(:mod:`symseq.read.evaluate`), a claim's printed string (:mod:`symseq.read.printed`) and the page scanner
(:mod:`symseq.read.scan`). Text is data: it is parsed, never run.
"""
