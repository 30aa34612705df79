"""Token identity and position: a declared tokenisation, a vocabulary, embedding lookup and positions.

The input to an encoder is built in three steps (rows are positions):

    k_t = vocab[token_t]                     token IDs, integers from 0
    e_t = E_vocab[k_t, :]                    lookup: E_vocab is K×D, E_seq is T×D
    H^(0) = E_seq + P                        P is T×D (sinusoidal or learned)

with sinusoidal positions (Vaswani et al. 2017, §3.5) for any width D:

    ω_j = 10000^(−2⌊j/2⌋/D),    P_{t,j} = sin(t ω_j) for even j,  cos(t ω_j) for odd j.

Neighbouring coordinates (2i, 2i+1) share a frequency; an odd width D ends
on an unpaired sine. Entries are exact SymPy values (sin(3), cos(3/10000^(2/5))).

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Words become
positioned token representations": Table 7 (tokens and IDs), Table 8 (the
9×5 embedding table), the position rule and p_3, and H^(0) = E_seq + P.
"""

from __future__ import annotations

import numbers
import unicodedata
from typing import Iterable, Sequence

import sympy as sp

from .. import ops
from ..arrays import integer
from ..errors import ConventionError, ShapeError, VocabularyError
from ..numbers import exact
from ._args import matrices


def tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """Split ``text`` into tokens by the handout's declared rule: lowercase, split at spaces, drop punctuation.

    Punctuation is every character whose Unicode category is P* (``.,;:!?'"()-``
    and their typographic forms); a word made only of punctuation disappears.
    Symbols such as ``→`` are not punctuation and are kept, so strip them
    from the text first if they are not tokens.

    Args:
        text: the sentence (any whitespace separates words).
        lowercase: lowercase every token (the handout's rule; default True).

    Returns:
        The list of tokens, one word one token: ``"A journey of a thousand
        miles begins"`` → ``["a", "journey", "of", "a", "thousand", "miles", "begins"]``.

    Raises:
        ConventionError: when ``text`` is not a string.

    Source: Week 06 handout (004), "Turn the completion into a sequence of token IDs".
    """
    if not isinstance(text, str):
        raise ConventionError(f"tokenize needs a string; got {type(text).__name__}")
    out = []
    for word in text.split():
        kept = "".join(ch for ch in word if not unicodedata.category(ch).startswith("P"))
        if kept:
            out.append(kept.lower() if lowercase else kept)
    return out


class Vocabulary:
    """Distinct tokens with integer IDs starting at zero, in the order given.

    ``Vocabulary(["a", "journey", ...])`` gives ``a`` the ID 0. There is no
    implicit unknown-word, padding or end-of-sequence token: looking up a
    token outside the vocabulary raises :class:`~symseq.errors.VocabularyError`
    naming it. Declare such tokens explicitly if a task needs them.

    Raises:
        ConventionError: for an empty vocabulary, a token that is not a
            non-empty string, or a token listed twice.

    Source: Week 06 handout (004), Table 7 (K = 9, IDs 0–8).
    """

    def __init__(self, tokens: Iterable[str]):
        tokens = list(tokens)
        if not tokens:
            raise ConventionError("a vocabulary needs at least one token")
        bad = [t for t in tokens if not isinstance(t, str) or not t]
        if bad:
            raise ConventionError(f"vocabulary tokens must be non-empty strings; got {bad[0]!r}")
        seen: dict[str, int] = {}
        for i, t in enumerate(tokens):
            if t in seen:
                raise ConventionError(
                    f"the token {t!r} is listed twice (IDs {seen[t]} and {i}); each token needs exactly one ID")
            seen[t] = i
        self._tokens = tuple(tokens)
        self._ids = seen

    @classmethod
    def from_sequences(cls, *sequences: Sequence[str]) -> "Vocabulary":
        """The distinct tokens of ``sequences`` in order of first occurrence (the handout's ID order)."""
        order: dict[str, None] = {}
        for seq in sequences:
            for t in seq:
                order.setdefault(t, None)
        return cls(order)

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token) -> bool:
        return token in self._ids

    def __iter__(self):
        return iter(self._tokens)

    def __repr__(self) -> str:
        return f"Vocabulary({list(self._tokens)!r})"

    @property
    def tokens(self) -> tuple[str, ...]:
        """The tokens in ID order."""
        return self._tokens

    def id(self, token: str) -> int:
        """The ID of ``token``; raises VocabularyError naming it when it is not in the vocabulary."""
        return self.ids([token])[0]

    def ids(self, tokens: Sequence[str]) -> list[int]:
        """IDs of a token sequence, k_t = vocab[token_t].

        Raises:
            VocabularyError: for a token outside the vocabulary, naming the
                token and its position in the sequence.
        """
        out = []
        for t, token in enumerate(tokens):
            try:
                out.append(self._ids[token])
            except (KeyError, TypeError):
                raise VocabularyError(
                    f"token {token!r} at position {t} is not in the vocabulary of {len(self)} tokens "
                    f"({', '.join(map(repr, self._tokens[:10]))}{', …' if len(self) > 10 else ''}); "
                    f"add it to the vocabulary or map it to a declared unknown-word token first"
                ) from None
        return out

    def token(self, k: int) -> str:
        """The token with ID ``k``; raises VocabularyError for an ID outside 0..K−1."""
        return self.tokens_of([k])[0]

    def tokens_of(self, ids: Sequence[int]) -> list[str]:
        """Tokens of a sequence of IDs (the inverse of :meth:`ids`)."""
        out = []
        for t, k in enumerate(ids):
            if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 0 <= k < len(self):
                raise VocabularyError(f"ID {k!r} at position {t} is outside 0..{len(self) - 1} "
                                      f"(a vocabulary of {len(self)} tokens)")
            out.append(self._tokens[k])
        return out


def embedding_lookup(L, E_vocab, ids: Sequence[int], *, name: str = "E_seq", note: str = ""):
    """Append ``name := E_vocab[ids, :]``: the rows selected by ID, stacked in input order.

    The ID selects a row; it is not multiplied into it. A token occurring
    twice selects the same row twice (Week 06, e_0 = e_3).

    Args:
        E_vocab: K×D embedding table (a ledger handle; rows are vocabulary IDs).
        ids: T token IDs k_t (from :meth:`Vocabulary.ids`).

    Returns:
        The handle of the T×D row E_seq.

    Raises:
        ShapeError: when E_vocab is not a matrix, ``ids`` is empty, or an ID is
            outside 0..K−1 (names the IDs and K).

    Source: Week 06 handout (004), "Look up a five-coordinate embedding for each token".
    """
    matrices("embedding_lookup", E_vocab=E_vocab)
    ids = [_as_id(k) for k in ids]
    if not ids:
        raise ShapeError("embedding lookup needs at least one token ID")
    return L.define(name, ops.TakeRows(E_vocab, ids, label="k_t"),
                    note=note or "embedding rows selected by token ID, one per position")


def _as_id(k) -> int:
    return integer(k, "a token ID", expected="an integer (token IDs come from Vocabulary.ids)")


def angular_frequencies(D: int, *, base=10000) -> list[sp.Expr]:
    """The exact frequencies ω_j = base^(−2⌊j/2⌋/D), j = 0..D−1 (radians per position).

    D = 5 gives (1, 1, 10000^(−2/5), 10000^(−2/5), 10000^(−4/5)).

    Raises:
        ShapeError: for D < 1. ConventionError: for a base that is not an exact finite number > 1.
    """
    D = integer(D, "D (the model width)", minimum=1)
    b = exact(base, what="the positional base")
    if not (b.is_number and b.is_extended_real and b.is_finite and b > 1):  # ∞ would make every ω_j (j ≥ 2) zero
        raise ConventionError(f"the positional base must be a finite number greater than 1 (Vaswani et al. use "
                              f"10000); got {base!r}")
    return [b ** sp.Rational(-2 * (j // 2), D) for j in range(D)]


def sinusoidal_positions(T: int, D: int, *, base=10000) -> sp.ImmutableMatrix:
    """The T×D sinusoidal position matrix P with exact entries (rows are positions t = 0..T−1).

        P_{t,j} = sin(t ω_j) for even j,  cos(t ω_j) for odd j,   ω_j = base^(−2⌊j/2⌋/D).

    For odd D the last coordinate j = D−1 is an unpaired sine; no cosine
    partner is added (Week 06, D = 5: p_t = (sin t, cos t, sin(t/10000^(2/5)),
    cos(t/10000^(2/5)), sin(t/10000^(4/5)))). p_0 = (0, 1, 0, 1, …).

    Raises:
        ShapeError: for T < 1 or D < 1.

    Source: Week 06 handout (004), "Supply position as a second vector";
    Vaswani et al. (2017), §3.5.
    """
    T = integer(T, "T (the number of positions)", minimum=1)
    omega = angular_frequencies(D, base=base)
    return sp.ImmutableMatrix(T, len(omega), lambda t, j: (sp.sin if j % 2 == 0 else sp.cos)(t * omega[j]))


def positions(L, T: int, D: int, *, base=10000, name: str = "P"):
    """Append the sinusoidal position matrix P (:func:`sinusoidal_positions`) as a fixed T×D input ``name``.

    P is an input, not a parameter: it has exact values and receives no
    gradient rows unless asked for. Use :func:`learned_positions` for a
    trainable table.

    Raises:
        ShapeError: for T or D below 1. ConventionError: for a base not greater than 1.
    """
    return L.input(name, sinusoidal_positions(T, D, base=base),
                   note=f"sinusoidal positions, ω_j = {base}^(−2⌊j/2⌋/{D})")


def learned_positions(L, table, T: int, *, name: str = "P"):
    """Append ``name := table[0:T, :]``: learned position embeddings, one parameter row per position.

    Args:
        table: T_max×D parameter (a ledger handle); row t is the vector of position t.
        T: the sequence length, at most T_max.

    Raises:
        ShapeError: when the table is a scalar, T exceeds the table's T_max rows (a learned table
            has no vector for positions it was not given) or T < 1.
    """
    T = integer(T, "T (the number of positions)", minimum=1)
    matrices("learned_positions", table=table)
    if T > table.shape[0]:
        raise ShapeError(f"learned positions: the sequence has {T} positions but the table has only "
                         f"{table.shape[0]} rows; learned positions cannot extend past the table")
    return L.define(name, ops.TakeRows(table, range(T), label="t"), note="learned position rows 0..T−1")


def add_positions(L, E_seq, P, *, name: str = "H^(0)"):
    """Append ``name := E_seq + P``: token identity and position added coordinate by coordinate (T×D).

    Raises:
        ShapeError: when E_seq or P is a scalar, or the shapes differ (names both); concatenation would
            be a different operation.
    """
    matrices(name, E_seq=E_seq, P=P)
    if E_seq.shape != P.shape:
        raise ShapeError(f"{name}: the embeddings are {ops._fmt_shape(E_seq.shape)} but the positions are "
                         f"{ops._fmt_shape(P.shape)}; E_seq + P needs one position row per token and equal widths")
    return L.define(name, E_seq + P, note="token embedding plus position, per row")


