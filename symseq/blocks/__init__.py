"""Building blocks that append rows to a ledger: projections, attention, norms, layers, losses."""

from .attention import Head, MultiHead, attention_head, causal_mask, mask_matrix, multi_head, scaled_dot_product
from .layers import (Block, BlockParams, Decoder, FeedForward, decoder, decoder_block, decoder_parameters,
                     feed_forward, residual)
from .linear import ORIENTATIONS, linear, project
from .losses import CrossEntropy, cross_entropy, probabilities
from .norms import Norm, layer_norm, rms_norm

__all__ = [
    "Head", "MultiHead", "attention_head", "causal_mask", "mask_matrix", "multi_head", "scaled_dot_product",
    "Block", "BlockParams", "Decoder", "FeedForward", "decoder", "decoder_block", "decoder_parameters",
    "feed_forward", "residual", "ORIENTATIONS", "linear", "project", "CrossEntropy", "cross_entropy",
    "probabilities", "Norm", "layer_norm", "rms_norm",
]

# Week 06 encoder: tokens, positions, masks, encoder blocks and task heads.
from . import masks
from .embeddings import (Vocabulary, add_positions, angular_frequencies, embedding_lookup, learned_positions,
                         positions, sinusoidal_positions, tokenize)
from .encoder import MLP, Encoder, EncoderBlock, EncoderParams, encoder, encoder_block, mlp
from .heads import (greedy_generate, masked_cross_entropy, masked_mean_pool, next_token_logits, next_token_targets,
                    tied_logits, token_classifier)

__all__ += [
    "masks", "Vocabulary", "add_positions", "angular_frequencies", "embedding_lookup", "learned_positions",
    "positions", "sinusoidal_positions", "tokenize", "MLP", "Encoder", "EncoderBlock", "EncoderParams", "encoder",
    "encoder_block", "mlp", "greedy_generate", "masked_cross_entropy", "masked_mean_pool", "next_token_logits",
    "next_token_targets", "tied_logits", "token_classifier",
]

# Recurrent cells, regression heads and squared-error losses (Week 06 handout, 004, first half).
from .cells import (GRU_GATES, GRU_VARIANTS, LSTM_GATES, GatedParams, Recurrence, RNNParams, gru, gru_mix, gru_parameters,
                    lstm, lstm_parameters, module_values, rnn, rnn_parameters, sequence_inputs)
from .heads_rnn import HalfSquaredNorm, Readout, SquaredError, regression_head, squared_error

__all__ += [
    "GRU_GATES", "GRU_VARIANTS", "LSTM_GATES", "GatedParams", "Recurrence", "RNNParams", "gru", "gru_mix", "gru_parameters",
    "lstm", "lstm_parameters", "module_values", "rnn", "rnn_parameters", "sequence_inputs", "HalfSquaredNorm",
    "Readout", "SquaredError", "regression_head", "squared_error",
]

# Fused W_QKV and its split, gated feed-forward maps, post-norm blocks (Handout #11, 001, §4.2, §5.1, §9.3).
from .fused import (QKV, FusedAttention, batched_self_attention, fused_self_attention,  # noqa: E402
                    head_widths, split_qkv)
from .gated import GATES, SILU, GatedFeedForward, gated_feed_forward  # noqa: E402
from .postnorm import post_norm_block  # noqa: E402

__all__ += [
    "QKV", "FusedAttention", "batched_self_attention", "fused_self_attention", "head_widths", "split_qkv",
    "GATES", "SILU", "GatedFeedForward", "gated_feed_forward", "post_norm_block",
]
