"""Unicode text and math as plain-ASCII LaTeX that pdflatex compiles.

Handout names and sentences carry Unicode (ŷ, ε, ∂, g₀ᶻ, H⁽⁰⁾, "Week 8 — One
Head", "§4"). LaTeX output must be ASCII so that it compiles with pdflatex and
the packages of texlive-latex-base alone:

* :func:`tex_math` turns a Unicode formula fragment into math-mode LaTeX:
  ``ŷ`` → ``\\hat{y}``, ``∂`` → ``\\partial``, ``g₀ᶻ`` → ``g_{0}^{z}``,
  ``⊙`` → ``\\odot``, ``√2`` → ``\\sqrt{2}``.
* :func:`tex_text` escapes a sentence for text mode (``#$%&_{}~^\\``) with
  pylatexenc, which also turns typographic Unicode into LaTeX (``—`` → ``---``,
  ``é`` → ``\\'e``); mathematical characters are wrapped in ``\\ensuremath``.
* :func:`mathjax_text` sets a sentence as math that MathJax (Jupyter) and
  pdflatex both accept: ``\\text{...}`` runs with the specials and
  mathematical characters set as math between them.

Characters with no LaTeX spelling become ``[U+XXXX]`` so that the output
still compiles and the gap is visible.
"""

from __future__ import annotations

import re
import unicodedata

GREEK_TEX = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon", "ϵ": r"\epsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta", "ι": r"\iota", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "ο": "o", "π": r"\pi", "ρ": r"\rho",
    "σ": r"\sigma", "ς": r"\varsigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\phi", "ϕ": r"\phi",
    "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega",
    "Α": "A", "Β": "B", "Γ": r"\Gamma", "Δ": r"\Delta", "Ε": "E", "Ζ": "Z", "Η": "H", "Θ": r"\Theta",
    "Ι": "I", "Κ": "K", "Λ": r"\Lambda", "Μ": "M", "Ν": "N", "Ξ": r"\Xi", "Ο": "O", "Π": r"\Pi",
    "Ρ": "P", "Σ": r"\Sigma", "Τ": "T", "Υ": r"\Upsilon", "Φ": r"\Phi", "Χ": "X", "Ψ": r"\Psi",
    "Ω": r"\Omega",
}

SYMBOL_TEX = {
    "∂": r"\partial", "∞": r"\infty", "′": "'", "″": "''", "·": r"\cdot", "⋅": r"\cdot", "⊙": r"\odot",
    "⊘": r"\oslash", "⊗": r"\otimes", "∘": r"\circ", "×": r"\times", "−": "-", "–": "-", "≤": r"\leq",
    "≥": r"\geq", "≈": r"\approx", "≠": r"\neq", "≡": r"\equiv", "→": r"\to", "←": r"\leftarrow",
    "↦": r"\mapsto", "⇒": r"\Rightarrow", "∑": r"\sum", "∏": r"\prod", "∫": r"\int", "∈": r"\in",
    "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "∪": r"\cup", "∩": r"\cap", "∀": r"\forall",
    "∃": r"\exists", "∇": r"\nabla", "±": r"\pm", "∓": r"\mp", "∝": r"\propto", "∼": r"\sim",
    "≔": ":=", "…": r"\ldots", "⋯": r"\cdots", "⋮": r"\vdots", "⋱": r"\ddots", "‖": r"\|", "∣": r"\mid",
    "⟨": r"\langle", "⟩": r"\rangle", "⌊": r"\lfloor", "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil",
    "ℓ": r"\ell", "ℒ": r"\mathcal{L}", "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}",
    "𝟙": r"\mathbf{1}", "𝔼": r"\mathbb{E}", "⊤": r"\top", "†": r"\dagger", "°": r"^{\circ}",
    "√": r"\sqrt", "∅": r"\emptyset", "¬": r"\neg", "∧": r"\wedge", "∨": r"\vee", "⊕": r"\oplus",
    "\u00a0": "~", "’": "'", "‘": "`", "½": r"\tfrac{1}{2}", "⅓": r"\tfrac{1}{3}", "⅔": r"\tfrac{2}{3}",
    "¼": r"\tfrac{1}{4}", "⅕": r"\tfrac{1}{5}", "⅖": r"\tfrac{2}{5}", "⅗": r"\tfrac{3}{5}", "⅘": r"\tfrac{4}{5}",
    "⅙": r"\tfrac{1}{6}", "⅚": r"\tfrac{5}{6}", "⅜": r"\tfrac{3}{8}", "⅝": r"\tfrac{5}{8}", "⅞": r"\tfrac{7}{8}", "¾": r"\tfrac{3}{4}", "⅛": r"\tfrac{1}{8}", "≪": r"\ll", "≫": r"\gg", "≃": r"\simeq",
    "≅": r"\cong", "∖": r"\setminus", "⊥": r"\perp", "∥": r"\parallel", "⟂": r"\perp", "ℏ": r"\hbar",
}

# Combining marks (after NFD decomposition) and their math accents.
ACCENT_MATH = {"\u0302": r"\hat", "\u0303": r"\tilde", "\u0304": r"\bar", "\u0305": r"\bar", "\u0307": r"\dot",
               "\u0308": r"\ddot", "\u20d7": r"\vec", "\u0301": r"\acute", "\u0300": r"\grave", "\u030c": r"\check"}
SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", "0123456789+-=()aehijklmnoprstuvx"))
SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ", "0123456789+-=()abcdefghijklmnoprstuvwxyz"))

_MATH_SPECIAL = {"#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&", "~": r"\sim ", "\\": r"\backslash "}

def _decomposed_letters(text: str) -> str:
    """NFC text with accented letters split into letter and combining mark (ŷ → y + ̂).

    Symbols keep their composed form: ≠ must stay ≠, not = with an overlay.
    """
    out = []
    for ch in unicodedata.normalize("NFC", text):
        d = unicodedata.normalize("NFD", ch)
        out.append(d if len(d) > 1 and d[0].isalpha() else ch)
    return "".join(out)


def _unknown(ch: str) -> str:
    return "[U+%04X]" % ord(ch)


def _script_runs(text: str, i: int, table: dict) -> tuple[str, int]:
    j = i
    while j < len(text) and text[j] in table:
        j += 1
    return "".join(table[c] for c in text[i:j]), j


# A subscript that is a word: two or more letters after ``_`` (d_head, W_out), or three or more in braces
# (d_{model}); ``A_{ij}`` keeps its two indices.
_WORD_SCRIPT = re.compile(r"_(?:([A-Za-z]{2,})(?![A-Za-z0-9{])|\{([A-Za-z]{3,})\})")


def tex_math(text: str, *, words: bool = False) -> str:
    """Math-mode LaTeX (ASCII) for a Unicode formula fragment.

    ``ŷ − y`` → ``\\hat{y} - y``; ``∂ℒ/∂W_Q`` → ``\\partial \\mathcal{L}/\\partial W_Q``;
    ``g₀ᶻ`` → ``g_{0}^{z}``; ``Wᵀ`` → ``W^{\\top}``; ``√2`` → ``\\sqrt{2}``. With ``words`` (a formula
    as a handout printed it), a subscript that is a word is upright: ``d_head`` → ``d_{\\mathrm{head}}``.
    ASCII passes through unchanged apart from ``#$%&~\\``, so LaTeX already in
    the text (``S_{6j}``) keeps its meaning.
    """
    s = _decomposed_letters(text)
    out: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        nxt = s[i + 1] if i + 1 < len(s) else ""
        if nxt in ACCENT_MATH:  # base letter followed by a combining accent
            base = _math_char(ch)
            out.append("%s{%s}" % (ACCENT_MATH[nxt], base))
            i += 2
            continue
        word = _WORD_SCRIPT.match(s, i) if ch == "_" and words else None
        if word:  # d_head: the subscript is the word "head", not h followed by "ead"
            out.append(r"_{\mathrm{%s}}" % (word.group(1) or word.group(2)))
            i = word.end()
            continue
        if ch in SUBSCRIPTS:
            run, i = _script_runs(s, i, SUBSCRIPTS)
            out.append("_{%s}" % run)
            continue
        if ch in SUPERSCRIPTS:
            run, i = _script_runs(s, i, SUPERSCRIPTS)
            out.append("^{%s}" % run)
            continue
        if ch == "ᵀ":
            out.append(r"^{\top}")
            i += 1
            continue
        if ch == "√":
            j = i + 1
            if j < len(s) and s[j] == "(":
                depth, k = 0, j
                while k < len(s):
                    depth += s[k] == "("
                    depth -= s[k] == ")"
                    if depth == 0:
                        break
                    k += 1
                out.append(r"\sqrt{%s}" % tex_math(s[j + 1:k]))
                i = k + 1
                continue
            k = j
            while k < len(s) and (s[k].isalnum() or s[k] == "."):
                k += 1
            if k > j:
                out.append(r"\sqrt{%s}" % tex_math(s[j:k]))
                i = k
                continue
            out.append(r"\surd ")
            i += 1
            continue
        if ch in ACCENT_MATH:  # a stray combining mark
            i += 1
            continue
        out.append(_math_char(ch))
        i += 1
    return _join_commands(out)


def _math_char(ch: str) -> str:
    if ch in GREEK_TEX:
        return GREEK_TEX[ch]
    if ch in SYMBOL_TEX:
        return SYMBOL_TEX[ch]
    if ch in _MATH_SPECIAL:
        return _MATH_SPECIAL[ch]
    if ord(ch) < 128:
        return ch
    base = unicodedata.normalize("NFKD", ch)
    if base != ch and all(ord(c) < 128 for c in base):
        return base
    return r"\text{%s}" % _unknown(ch)


def _join_commands(parts: list[str]) -> str:
    """Join pieces, separating a control word from a following letter (``\\alpha x``, not ``\\alphax``)."""
    out = ""
    for p in parts:
        if out and p and p[0].isalpha() and _ends_with_control_word(out):
            out += " "
        out += p
    return out


def _ends_with_control_word(s: str) -> bool:
    j = len(s)
    while j > 0 and s[j - 1].isalpha():
        j -= 1
    return j < len(s) and j > 0 and s[j - 1] == "\\"


def _math_run(text: str, pos: int):
    """pylatexenc rule for the characters of a sentence that are mathematics: a run of sub- or superscript
    characters (``₀₁`` → ``\\ensuremath{_{01}}``), ``ᵀ``, ``√``, Greek letters and symbols
    (:data:`GREEK_TEX`, :data:`SYMBOL_TEX`) and ``< > |``, which the text fonts do not all hold."""
    ch = text[pos]
    nxt = text[pos + 1] if pos + 1 < len(text) else ""
    if nxt in ACCENT_MATH and ch.isalpha():  # a letter with a mark Unicode has no single character for: h̃
        return 2, r"\ensuremath{%s{%s}}" % (ACCENT_MATH[nxt], _math_char(ch))
    d = unicodedata.normalize("NFD", ch)
    if "\u1e00" <= ch <= "\u1eff" and len(d) == 2 and d[1] in ACCENT_MATH:  # Ḡ, ẋ: the accent is mathematics
        return 1, r"\ensuremath{%s{%s}}" % (ACCENT_MATH[d[1]], d[0])
    if len(d) == 2 and d[1] in _SYMBOL_ACCENTS and d[0].isascii() and not (  # ŷ on its own is a symbol, not a word
            pos > 0 and text[pos - 1].isalpha() or pos + 1 < len(text) and text[pos + 1].isalpha()):
        return 1, r"\ensuremath{%s{%s}}" % (ACCENT_MATH[d[1]], d[0])
    if ch in SUBSCRIPTS or ch in SUPERSCRIPTS:
        table = SUBSCRIPTS if ch in SUBSCRIPTS else SUPERSCRIPTS
        run, end = _script_runs(text, pos, table)
        return end - pos, r"\ensuremath{%s{%s}}" % ("_" if table is SUBSCRIPTS else "^", run)
    if ch == "ᵀ":
        return 1, r"\ensuremath{^{\top}}"
    if ch == "√":
        return 1, r"\ensuremath{\surd}"
    if ch in _TEXT_MATH:
        return 1, _TEXT_MATH[ch]
    if (ch in GREEK_TEX or ch in SYMBOL_TEX) and ch not in "’‘":  # quotes are text: it’s, not a prime
        return 1, r"\ensuremath{%s}" % _math_char(ch)
    return None


# Accents that make a letter standing alone a mathematical symbol (ŷ, x̄, ñ): hat, tilde, bar, dot, arrow; not those of
# words (é, à, ü), which stay text accents.
_SYMBOL_ACCENTS = frozenset("\u0302\u0303\u0304\u0305\u0307\u20d7")

_TEXT_MATH = {"<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "—": "---", "–": "--",
              "§": r"\S{}", "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,", "\u200b": ""}

_ENCODER = None


def _encoder():
    """pylatexenc's text encoder with our rules first (:func:`_math_run`), its own table for the rest
    (accents, quotes, dashes and specials: ``é`` → ``\\'e``, ``#`` → ``\\#``)."""
    global _ENCODER
    if _ENCODER is None:
        from pylatexenc.latexencode import (RULE_CALLABLE, UnicodeToLatexConversionRule,
                                            UnicodeToLatexEncoder)

        _ENCODER = UnicodeToLatexEncoder(
            conversion_rules=[UnicodeToLatexConversionRule(RULE_CALLABLE, _math_run), "defaults"],
            non_ascii_only=False, replacement_latex_protection="braces-after-macro",
            unknown_char_policy=lambda ch: _unknown(ch), unknown_char_warning=False)
    return _ENCODER


def tex_text(text: str) -> str:
    """Text-mode LaTeX (ASCII) for a sentence: specials escaped, typography and math characters converted.

    Escaping is pylatexenc's (``pylatexenc.latexencode``), after our rules for what is mathematics in a
    sentence. ``Week 8 — One Head`` → ``Week 8 --- One Head``; ``§4`` → ``\\S{}4``;
    ``p(B|AB)`` → ``p(B\\textbar{}AB)``; ``W_Q`` → ``W\\_Q``; ``φ′(z₀)`` →
    ``\\ensuremath{\\phi}\\ensuremath{'}(z\\ensuremath{_{0}})``. A character with no LaTeX spelling
    becomes ``[U+XXXX]``.
    """
    return _encoder().unicode_to_latex(unicodedata.normalize("NFC", text))


# Characters a ``\text{}`` run cannot hold in both MathJax and pdflatex, set as math between runs instead.
_MATHJAX_SPECIAL = {"{": r"\{", "}": r"\}", "\\": r"\backslash ", "$": r"\$", "#": r"\#", "%": r"\%", "&": r"\&",
                    "_": r"\_", "^": r"\wedge ", "~": r"\sim ", "<": "<", ">": ">", "|": "|"}
# Typography both keep as it is inside \text (pdflatex reads UTF-8 input since LaTeX 2018).
_MATHJAX_TYPO = frozenset("—–’‘“”§¶…©")


def math_mode_chars(text: str) -> str:
    """``text`` with each character that math mode reads as markup (``{ } \\ $ # % & _ ^ ~``) escaped, as
    :func:`mathjax_text` sets them between its runs: for code set in ``\\mathtt{…}`` (matplotlib's mathtext
    takes the same escapes)."""
    return "".join(_MATHJAX_SPECIAL.get(ch, ch) for ch in text)


def mathjax_text(text: str, command: str = "text") -> str:
    """A sentence as math that MathJax (Jupyter) and pdflatex (amsmath, amssymb) both typeset.

    ASCII words, accented Latin letters and typography (``—``, ``§``, ``’``) go in ``\\text{...}`` runs
    (``command="textbf"`` for a heading); characters ``\\text`` cannot hold in both
    (``{ } \\ $ # % & _ ^ ~ < > |``) and mathematical characters (Greek, ``∂``, ``≈``, ``g₀``, ``O⁽¹⁾``,
    ``ᵀ``) are set as math between the runs (``\\_``, ``\\partial``, ``_{0}``, ``^{(1)}``); a character
    neither knows becomes ``[U+XXXX]``. Spaces stay inside the runs, so words keep their spacing.
    """
    out, run, math = [], [], []

    def flush():
        if run:
            out.append(r"\%s{%s}" % (command, "".join(run)))
            run.clear()
        if math:  # one formula, so that a run of scripts (⁽¹⁾, ⁻⁸) is one superscript
            out.append(tex_math("".join(math)))
            math.clear()

    for ch in unicodedata.normalize("NFC", text):
        if ch in _MATHJAX_SPECIAL:
            flush()
            out.append(_MATHJAX_SPECIAL[ch])
        elif ch in "\n\t\u00a0\u2009\u202f" or (32 <= ord(ch) < 127 or ch in _MATHJAX_TYPO
                                                 or (ord(ch) < 0x180 and ch.isalpha()
                                                     and unicodedata.normalize("NFD", ch)[0].isascii())):
            if math:
                flush()
            run.append(ch if ch.isprintable() else " ")
        elif ch in GREEK_TEX or ch in SYMBOL_TEX or ch in SUBSCRIPTS or ch in SUPERSCRIPTS or ch == "ᵀ" \
                or unicodedata.normalize("NFD", ch)[1:2] in ACCENT_MATH:
            if run:
                flush()
            math.append(ch)
        elif ch in ACCENT_MATH or unicodedata.combining(ch) or not ch.isprintable():
            continue  # a stray combining mark or control character
        else:
            if math:
                flush()
            run.append(_unknown(ch))
    flush()
    return _join_commands(out)


# Control words a formula in a handout's LaTeX source may use and pdflatex knows with amsmath and amssymb.
SOURCE_COMMANDS = frozenset("""
    frac tfrac dfrac sqrt mathcal mathbf mathrm mathbb mathit mathsf boldsymbol widehat widetilde hat tilde bar
    vec dot ddot overline underline partial nabla sum prod int lim max min argmax exp log ln sin cos tanh det
    cdot times odot otimes oplus circ le leq ge geq ne neq approx sim simeq equiv propto in notin to mapsto
    infty ldots cdots dots top lfloor rfloor lceil rceil langle rangle left right big Big bigl bigr mid quad
    qquad text operatorname ell alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa
    lambda mu nu xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma
    Upsilon Phi Psi Omega
""".split())

_PROSE = re.compile(r"^[(\[]?([A-Za-z]{2,})[)\],.;:]*$")


def balanced_braces(s: str) -> bool:
    """Whether the groups ``{...}`` of ``s`` close in order (escaped ``\\{`` and ``\\}`` do not count)."""
    depth = 0
    for ch in s.replace(r"\{", "").replace(r"\}", ""):
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            return False
    return depth == 0


def tex_source_parts(text: str) -> list[tuple[str, str]] | None:
    """A formula as a LaTeX handout writes it in its source, split into ("math", tex) and ("text", words) runs.

    ``\\mathcal L=\\frac12(\\widehat y-y)^2`` is one math run; in
    ``\\phi'(z)=1 for z>0`` the word "for" is text. Unicode in math runs is
    converted as by :func:`tex_math`; control words pass unchanged.

    Returns None when the string is not safe to typeset: a control word
    outside :data:`SOURCE_COMMANDS`, a math run whose braces do not balance,
    or one of ``$ % # &``.
    """
    if any(ch in text for ch in "$%#&"):
        return None
    for m in re.finditer(r"\\([A-Za-z]+|.)", text):
        if m.group(1) not in SOURCE_COMMANDS and m.group(1) not in (",", ";", "!", " ", "{", "}", "|"):
            return None
    runs: list[list] = []  # [kind, [tokens]]
    for tok in re.split(r"(\s+)", text.strip()):
        if not tok:
            continue
        kind = "space" if tok.isspace() else ("text" if _PROSE.match(tok) else "math")
        if kind == "space" and runs:
            runs[-1][1].append(tok)
        elif runs and runs[-1][0] == kind:
            runs[-1][1].append(tok)
        elif kind != "space":
            runs.append([kind, [tok]])
    out: list[tuple[str, str]] = []
    for kind, toks in runs:
        body = "".join(toks)
        trail = body[len(body.rstrip()):]
        body = body.rstrip()
        if kind == "math":
            if not balanced_braces(body):
                return None
            pieces = re.split(r"(\\[A-Za-z]+|\\.)", body)
            body = _join_commands([p if p.startswith("\\") else tex_math(p, words=True) for p in pieces if p])
        out.append((kind, body))
        if trail:
            out.append(("text", " "))
    return out


def source_formula_text(text: str) -> str:
    """Text-mode LaTeX for a formula from a handout's LaTeX source: math runs in ``$...$``, words as text; a
    string :func:`tex_source_parts` cannot typeset safely is shown verbatim in typewriter type."""
    from .views import latex_label

    parts = tex_source_parts(text)
    if parts is None:
        return texttt(text)
    return "".join(f"${s}$" if kind == "math" else latex_label(s) for kind, s in parts)


def texttt(text: str) -> str:
    """Verbatim-looking typewriter text for a string that may hold anything (a printed formula)."""
    return r"\texttt{%s}" % tex_text(text)
