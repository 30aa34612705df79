"""Building blocks that append rows to a ledger, by concept.

* projections: :func:`linear`, :func:`project` (weight orientation named explicitly);
* attention: one head, several heads, fused W_QKV, and :mod:`.masks` (the
  :class:`Mask` type naming its convention: keep, exclude or additive; causal,
  key padding, combinations);
* norms: LayerNorm, RMSNorm;
* the Transformer block: :func:`transformer_block` (pre- or post-norm, the
  handout's row names), its :func:`mlp`, gated feed-forward maps, residual sums,
  stacks (:func:`encoder`, :func:`decoder`);
* tokens and positions: vocabulary, embeddings, sinusoidal and learned positions;
* recurrent cells: RNN, GRU, LSTM;
* readouts and losses: vocabulary logits, classifiers, pooling, cross-entropy,
  regression heads and squared errors, greedy generation.
"""

from . import masks
from .masks import Mask
from .attention import Head, MultiHead, attention_head, mask_matrix, multi_head, scaled_dot_product
from .cells import (GRU_GATES, GRU_VARIANTS, LSTM_GATES, GatedParams, Recurrence, RNNParams, gru, gru_mix,
                    gru_parameters, lstm, lstm_parameters, module_values, rnn, rnn_parameters, sequence_inputs)
from .embeddings import (Vocabulary, add_positions, angular_frequencies, embedding_lookup, learned_positions,
                         positions, sinusoidal_positions, tokenize)
from .fused import QKV, FusedAttention, batched_self_attention, fused_self_attention, head_widths, split_qkv
from .gated import GATES, SILU, GatedFeedForward, gated_feed_forward
from .heads import (greedy_generate, masked_cross_entropy, masked_mean_pool, next_token_logits, next_token_targets,
                    tied_logits, token_classifier)
from .heads import HalfSquaredNorm, Readout, SquaredError, regression_head, squared_error
from .linear import ORIENTATIONS, linear, project
from .losses import CrossEntropy, cross_entropy, probabilities
from .norms import Norm, layer_norm, rms_norm
from .transformer import (DECODER_NAMES, ENCODER_NAMES, MLP, NORM_PLACEMENTS, BlockNames, BlockParams, Decoder,
                          Encoder, TransformerBlock, decoder, decoder_parameters, encoder, mlp, residual,
                          transformer_block)

__all__ = [
    # projections
    "ORIENTATIONS", "linear", "project",
    # attention and masks
    "Head", "MultiHead", "attention_head", "multi_head", "scaled_dot_product", "mask_matrix", "masks", "Mask",
    "QKV", "FusedAttention", "fused_self_attention", "batched_self_attention", "split_qkv", "head_widths",
    # norms
    "Norm", "layer_norm", "rms_norm",
    # the Transformer block
    "BlockParams", "BlockNames", "DECODER_NAMES", "ENCODER_NAMES", "NORM_PLACEMENTS", "TransformerBlock",
    "transformer_block", "MLP", "mlp", "GATES", "SILU", "GatedFeedForward", "gated_feed_forward", "residual",
    "Encoder", "encoder", "Decoder", "decoder", "decoder_parameters",
    # tokens and positions
    "Vocabulary", "tokenize", "embedding_lookup", "positions", "sinusoidal_positions", "angular_frequencies",
    "learned_positions", "add_positions",
    # recurrent cells
    "RNNParams", "GatedParams", "Recurrence", "rnn", "rnn_parameters", "gru", "gru_mix", "gru_parameters",
    "GRU_GATES", "GRU_VARIANTS", "lstm", "lstm_parameters", "LSTM_GATES", "module_values", "sequence_inputs",
    # readouts and losses
    "CrossEntropy", "cross_entropy", "probabilities", "next_token_logits", "tied_logits", "token_classifier",
    "masked_mean_pool", "masked_cross_entropy", "next_token_targets", "greedy_generate", "Readout",
    "regression_head", "SquaredError", "HalfSquaredNorm", "squared_error",
]
