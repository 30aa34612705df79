"""Every public block refuses a scalar of the ledger where it needs a matrix, with a ShapeError naming the argument
(layer_norm, cross_entropy and attention_head raised AttributeError: 'Symbol' object has no attribute 'shape')."""

import inspect

import pytest

from symseq import Ledger, blocks
from symseq.errors import ShapeError

T, D, DK, V, F = 3, 4, 2, 5, 6  # pairwise distinct sizes: a swapped axis cannot pass


def block_params(m):
    return blocks.BlockParams(heads=[(m["W_Q"], m["W_K"], m["W_V"])], W_O=m["W_O"],
                              mlp=(m["W_1"], m["b_1"], m["W_2"], m["b_2"]), ln1=(m["gamma"], m["beta"]),
                              ln2=(m["gamma"], m["beta"]))


# block name: (its matrix arguments and their shapes, the call given L and those arguments by name)
CASES = {
    "linear": ({"X": (T, D), "W": (D, DK), "b": (1, DK)},
               lambda L, m: blocks.linear(L, "Y", m["X"], m["W"], m["b"], orientation="in_out")),
    "project": ({"X": (T, D), "W": (D, DK)}, lambda L, m: blocks.project(m["X"], m["W"], orientation="in_out")),
    "attention_head": ({"H": (T, D), "W_Q": (D, DK), "W_K": (D, DK), "W_V": (D, DK), "X_kv": (T, D)},
                       lambda L, m: blocks.attention_head(L, m["H"], m["W_Q"], m["W_K"], m["W_V"],
                                                          orientation="in_out", X_kv=m["X_kv"])),
    "multi_head": ({"H": (T, D), "W_Q": (D, DK), "W_K": (D, DK), "W_V": (D, DK), "W_O": (DK, D)},
                   lambda L, m: blocks.multi_head(L, m["H"], [(m["W_Q"], m["W_K"], m["W_V"])], m["W_O"],
                                                  orientation="in_out")),
    "scaled_dot_product": ({"Q": (T, DK), "K": (V, DK), "V": (V, D)},
                           lambda L, m: blocks.scaled_dot_product(L, m["Q"], m["K"], m["V"])),
    "fused_self_attention": ({"X": (T, D), "W_QKV": (D, 3 * DK), "W_O": (DK, D), "b_QKV": (1, 3 * DK),
                              "b_O": (1, D)},
                             lambda L, m: blocks.fused_self_attention(L, m["X"], m["W_QKV"], m["W_O"], n_heads=1,
                                                                      orientation="in_out", b_QKV=m["b_QKV"],
                                                                      b_O=m["b_O"])),
    "batched_self_attention": ({"Xs": (T, D), "W_QKV": (D, 3 * DK), "W_O": (DK, D)},
                               lambda L, m: blocks.batched_self_attention(L, [m["Xs"]], m["W_QKV"], m["W_O"],
                                                                          n_heads=1, orientation="in_out")),
    "split_qkv": ({"X": (T, D), "W_QKV": (D, 3 * DK), "b_QKV": (1, 3 * DK)},
                  lambda L, m: blocks.split_qkv(L, m["X"], m["W_QKV"], m["b_QKV"], n_heads=1, orientation="in_out")),
    "head_widths": ({"W_QKV": (D, 3 * DK)}, lambda L, m: blocks.head_widths(m["W_QKV"], 1, None, None, "in_out")),
    "layer_norm": ({"X": (T, D), "gamma": (1, D), "beta": (1, D)},
                   lambda L, m: blocks.layer_norm(L, m["X"], m["gamma"], m["beta"])),
    "rms_norm": ({"X": (T, D), "gamma": (1, D)}, lambda L, m: blocks.rms_norm(L, m["X"], m["gamma"])),
    "transformer_block": ({"H": (T, D), "W_Q": (D, DK), "W_K": (D, DK), "W_V": (D, DK), "W_O": (DK, D),
                           "W_1": (D, F), "b_1": (1, F), "W_2": (F, D), "b_2": (1, D), "gamma": (1, D),
                           "beta": (1, D)},
                          lambda L, m: blocks.transformer_block(L, m["H"], block_params(m), orientation="in_out")),
    "mlp": ({"X": (T, D), "W_1": (D, F), "b_1": (1, F), "W_2": (F, D), "b_2": (1, D)},
            lambda L, m: blocks.mlp(L, m["X"], m["W_1"], m["b_1"], m["W_2"], m["b_2"], orientation="in_out")),
    "gated_feed_forward": ({"X": (T, D), "W_gate": (D, F), "W_up": (D, F), "W_down": (F, D), "b_gate": (1, F),
                            "b_up": (1, F), "b_down": (1, D)},
                           lambda L, m: blocks.gated_feed_forward(L, m["X"], m["W_gate"], m["W_up"], m["W_down"],
                                                                  orientation="in_out", b_gate=m["b_gate"],
                                                                  b_up=m["b_up"], b_down=m["b_down"])),
    "residual": ({"H": (T, D), "F": (T, D)}, lambda L, m: blocks.residual(L, "R", m["H"], m["F"])),
    "encoder": ({"H0": (T, D), "W_Q": (D, DK), "W_K": (D, DK), "W_V": (D, DK), "W_O": (DK, D), "W_1": (D, F),
                 "b_1": (1, F), "W_2": (F, D), "b_2": (1, D), "gamma": (1, D), "beta": (1, D)},
                lambda L, m: blocks.encoder(L, m["H0"], [block_params(m)], orientation="in_out",
                                            ln_final=(m["gamma"], m["beta"]))),
    "decoder": ({"H0": (T, D), "W_Q": (D, DK), "W_K": (D, DK), "W_V": (D, DK), "W_O": (DK, D), "W_1": (D, F),
                 "b_1": (1, F), "W_2": (F, D), "b_2": (1, D), "gamma": (1, D), "beta": (1, D), "W_out": (D, V),
                 "b_out": (1, V)},
                lambda L, m: blocks.decoder(L, m["H0"], [block_params(m)], W_out=m["W_out"], b_out=m["b_out"],
                                            orientation="in_out")),
    "embedding_lookup": ({"E_vocab": (V, D)}, lambda L, m: blocks.embedding_lookup(L, m["E_vocab"], [0, 2, 4])),
    "learned_positions": ({"table": (V, D)}, lambda L, m: blocks.learned_positions(L, m["table"], T)),
    "add_positions": ({"E_seq": (T, D), "P": (T, D)}, lambda L, m: blocks.add_positions(L, m["E_seq"], m["P"])),
    "cross_entropy": ({"Z": (T, V)}, lambda L, m: blocks.cross_entropy(L, m["Z"], [0, 1, 4])),
    "probabilities": ({"Z": (T, V)}, lambda L, m: blocks.probabilities(L, m["Z"])),
    "next_token_logits": ({"H_enc": (T, D), "W_o": (D, V), "b_o": (1, V)},
                          lambda L, m: blocks.next_token_logits(L, m["H_enc"], m["W_o"], m["b_o"],
                                                                orientation="in_out")),
    "tied_logits": ({"H_enc": (T, D), "E_vocab": (V, D)},
                    lambda L, m: blocks.tied_logits(L, m["H_enc"], m["E_vocab"])),
    "token_classifier": ({"H_enc": (T, D), "W_o": (D, V), "b_o": (1, V)},
                         lambda L, m: blocks.token_classifier(L, m["H_enc"], m["W_o"], m["b_o"],
                                                              orientation="in_out")),
    "masked_mean_pool": ({"H": (T, D)}, lambda L, m: blocks.masked_mean_pool(L, m["H"], [1, 1, 0])),
    "masked_mean_pool (batch)": ({"H": (T, D)},
                                 lambda L, m: blocks.masked_mean_pool(L, [m["H"], m["H"]], [[1, 0, 1], [1, 1, 0]])),
    "masked_cross_entropy": ({"Z": (T, V)}, lambda L, m: blocks.masked_cross_entropy(L, m["Z"], [0, 1, 4])),
    "regression_head": ({"states[1]": (1, D), "W_o": (2, D), "b_o": (1, 2)},  # (one scalar state is a scalar head)
                        lambda L, m: blocks.regression_head(L, [L.input("h_0", shape=(1, D)), m["states[1]"]],
                                                            m["W_o"], m["b_o"])),
}

# public blocks that take no matrix of the ledger, or take a scalar as well as a matrix everywhere (a scalar RNN
# cell, gru_mix's entrywise mixture), each with why it has no case above
NO_CASE = {
    "mask_matrix": "takes a boolean array, not a ledger value",
    "decoder_parameters": "makes its parameters from sizes", "rnn_parameters": "makes its parameters from sizes",
    "gru_parameters": "makes its parameters from sizes", "lstm_parameters": "makes its parameters from sizes",
    "sequence_inputs": "makes its inputs from a count", "positions": "makes its rows from sizes",
    "sinusoidal_positions": "a matrix from sizes", "angular_frequencies": "numbers from a width",
    "tokenize": "text", "next_token_targets": "token ids", "greedy_generate": "a function of token ids",
    "module_values": "a torch module's state", "gru_mix": "entrywise: scalars and matrices alike",
    "rnn": "a scalar cell is a cell: x_t and the weights are all scalars or all matrices (tests/test_cells.py)",
    "gru": "a scalar cell is a cell (as rnn)", "lstm": "a scalar cell is a cell (as rnn)",
    "squared_error": "takes a Readout (the regression head checked its states)",
}


def test_every_public_block_has_a_case():
    public = {n for n in blocks.__all__ if inspect.isfunction(getattr(blocks, n))}
    covered = {name.split(" ")[0] for name in CASES} | set(NO_CASE)
    assert public - covered == set()


def _arguments(L, shapes):
    return {name: L.input(f"in_{name}", shape=shape) for name, shape in shapes.items()}


@pytest.mark.parametrize("block", sorted(CASES))
def test_each_case_builds_with_matrices(block):
    """The calls below are right but for the one scalar each test puts in: without it the block builds."""
    shapes, call = CASES[block]
    L = Ledger(block)
    assert call(L, _arguments(L, shapes)) is not None


@pytest.mark.parametrize("block, argument", [(b, a) for b in sorted(CASES) for a in CASES[b][0]])
def test_a_scalar_where_a_matrix_is_needed_is_a_shape_error_naming_the_argument(block, argument):
    shapes, call = CASES[block]
    L = Ledger(block)
    m = _arguments(L, shapes)
    m[argument] = L.input("s")  # a scalar of the ledger
    with pytest.raises(ShapeError) as err:
        call(L, m)
    message = str(err.value)
    assert argument in message and "got the scalar s" in message and "1×d matrix" in message, message
