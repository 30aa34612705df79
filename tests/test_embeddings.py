"""Tokens, vocabulary, embedding lookup and positions (Week 06 handout, 004, "Words become positioned ...")."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import ConventionError, Ledger, ShapeError, VocabularyError, blocks, evaluate, ops
from symseq.verify.autograd import exact_binary


def test_tokenize_lowercases_splits_at_spaces_and_drops_punctuation():
    assert blocks.tokenize("A journey of a thousand miles begins") == [
        "a", "journey", "of", "a", "thousand", "miles", "begins"]
    assert blocks.tokenize("  Step, step;  STEP! (step) — don't ") == ["step", "step", "step", "step", "dont"]
    assert blocks.tokenize("Keep Case.", lowercase=False) == ["Keep", "Case"]
    assert blocks.tokenize("a → b") == ["a", "→", "b"]  # a symbol is not punctuation
    with pytest.raises(ConventionError, match="needs a string"):
        blocks.tokenize(["a", "b"])


def test_vocabulary_ids_in_first_occurrence_order():
    vocab = blocks.Vocabulary.from_sequences(blocks.tokenize("A journey of a thousand miles begins"),
                                             blocks.tokenize("with a single step."))
    assert vocab.tokens == ("a", "journey", "of", "thousand", "miles", "begins", "with", "single", "step")
    assert len(vocab) == 9
    assert vocab.ids(["a", "journey", "of", "a", "thousand", "miles", "begins"]) == [0, 1, 2, 0, 3, 4, 5]
    assert vocab.id("with") == 6 and vocab.token(8) == "step"
    assert vocab.tokens_of([5, 0]) == ["begins", "a"]
    assert "miles" in vocab and "mile" not in vocab


def test_unknown_token_is_named_with_its_position():
    vocab = blocks.Vocabulary(["a", "b", "c"])
    with pytest.raises(VocabularyError, match=r"token 'zebra' at position 2 is not in the vocabulary of 3 tokens"):
        vocab.ids(["a", "b", "zebra"])
    with pytest.raises(VocabularyError, match=r"ID 3 at position 0 is outside 0..2"):
        vocab.tokens_of([3])
    with pytest.raises(ConventionError, match="listed twice"):
        blocks.Vocabulary(["a", "b", "a"])
    with pytest.raises(ConventionError, match="at least one token"):
        blocks.Vocabulary([])


def test_embedding_lookup_selects_rows_by_id_and_repeats_them():
    L = Ledger()
    E = L.parameter("E_vocab", [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]])  # K = 4, D = 3
    E_seq = blocks.embedding_lookup(L, E, [2, 0, 2, 3, 1])  # T = 5
    assert E_seq.shape == (5, 3)
    assert L.value(E_seq.name) == sp.Matrix([[7, 8, 9], [1, 2, 3], [7, 8, 9], [10, 11, 12], [4, 5, 6]])
    with pytest.raises(ShapeError, match=r"ids \[4\] are outside 0..3"):
        blocks.embedding_lookup(L, E, [0, 4], name="bad")
    with pytest.raises(ShapeError, match="a token ID must be an integer"):
        blocks.embedding_lookup(L, E, [0, 1.0], name="bad2")


def test_sinusoidal_positions_odd_width_ends_on_an_unpaired_sine():
    P = blocks.sinusoidal_positions(7, 5)
    assert P.shape == (7, 5)
    r = sp.Integer(10000)
    assert P[3, :] == sp.Matrix([[sp.sin(3), sp.cos(3), sp.sin(3 / r ** sp.Rational(2, 5)),
                                  sp.cos(3 / r ** sp.Rational(2, 5)), sp.sin(3 / r ** sp.Rational(4, 5))]])
    assert P[0, :] == sp.Matrix([[0, 1, 0, 1, 0]])
    printed = [sp.Rational(141, 1000), sp.Rational(-990, 1000), sp.Rational(753, 10000), sp.Rational(997, 1000),
               sp.Rational(189, 100000)]  # Week 06, p_3 to three significant digits
    for value, p in zip(P[3, :], printed):
        assert abs(sp.N(value, 20) - p) <= abs(p) * sp.Rational(5, 1000)


def test_sinusoidal_positions_even_and_width_three():
    P4 = blocks.sinusoidal_positions(3, 4)
    assert P4[2, :] == sp.Matrix([[sp.sin(2), sp.cos(2), sp.sin(sp.Rational(2, 100)), sp.cos(sp.Rational(2, 100))]])
    P3 = blocks.sinusoidal_positions(2, 3)
    assert P3[1, :] == sp.Matrix([[sp.sin(1), sp.cos(1), sp.sin(1 / sp.Integer(10000) ** sp.Rational(2, 3))]])
    assert blocks.angular_frequencies(5) == [1, 1, sp.Integer(10000) ** sp.Rational(-2, 5),
                                             sp.Integer(10000) ** sp.Rational(-2, 5),
                                             sp.Integer(10000) ** sp.Rational(-4, 5)]
    assert blocks.sinusoidal_positions(2, 2, base=4)[1, :] == sp.Matrix([[sp.sin(1), sp.cos(1)]])
    with pytest.raises(ShapeError, match="D \\(the model width\\) must be a positive integer"):
        blocks.sinusoidal_positions(3, 0)
    with pytest.raises(ConventionError, match="greater than 1"):
        blocks.sinusoidal_positions(3, 4, base=1)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9))
def test_positions_rule_for_any_width(T, D):
    P = blocks.sinusoidal_positions(T, D)
    for t in range(T):
        for j in range(D):
            omega = sp.Integer(10000) ** sp.Rational(-2 * (j // 2), D)
            assert P[t, j] == (sp.sin if j % 2 == 0 else sp.cos)(t * omega)
    # The paired coordinates lie on the unit circle; an unpaired last sine has no partner.
    for j in range(0, D - 1, 2):
        assert all(abs(sp.N(P[t, j] ** 2 + P[t, j + 1] ** 2 - 1, 40)) < 1e-35 for t in range(T))


def test_positions_and_learned_positions_as_ledger_rows():
    L = Ledger()
    E = L.parameter("E_vocab", [[1, 0], [0, 1], [1, 1]])  # K = 3, D = 2
    E_seq = blocks.embedding_lookup(L, E, [2, 1, 0, 2])  # T = 4
    P = blocks.positions(L, 4, 2)
    H0 = blocks.add_positions(L, E_seq, P)
    assert L.value(H0.name)[1, :] == sp.Matrix([[sp.sin(1), 1 + sp.cos(1)]])
    table = L.parameter("P_table", [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]])  # T_max = 6
    Pl = blocks.learned_positions(L, table, 4, name="P_learned")
    assert L.value(Pl.name) == sp.Matrix([[0, 1], [2, 3], [4, 5], [6, 7]])
    with pytest.raises(ShapeError, match="the sequence has 7 positions but the table has only 6 rows"):
        blocks.learned_positions(L, table, 7, name="P_too_long")
    with pytest.raises(ShapeError, match=r"the embeddings are 4×2 but the positions are 3×2"):
        blocks.add_positions(L, E_seq, L.input("P3", shape=(3, 2)), name="H_bad")


def test_learned_positions_and_embeddings_receive_gradients_where_used(rng):
    L = Ledger()
    E = L.parameter("E_vocab", shape=(3, 2))
    table = L.parameter("P_table", shape=(5, 2))
    H0 = blocks.add_positions(L, blocks.embedding_lookup(L, E, [2, 0, 2]), blocks.learned_positions(L, table, 3))
    G = L.input("G", [[1, 2], [3, 4], [5, 6]])
    L.define("loss", ops.Sum(H0 * G, None))
    g = L.backward("loss")
    vals = evaluate(L, "mpmath", values={"E_vocab": exact_binary(rng.normal(size=(3, 2))),
                                         "P_table": exact_binary(rng.normal(size=(5, 2)))})
    gE = np.array(vals[g.name("E_vocab")], dtype=float)
    gP = np.array(vals[g.name("P_table")], dtype=float)
    np.testing.assert_array_equal(gE, [[3, 4], [0, 0], [6, 8]])  # ID 2 used twice: contributions add
    np.testing.assert_array_equal(gP, [[1, 2], [3, 4], [5, 6], [0, 0], [0, 0]])  # unused positions get zero
