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

# Fused W_QKV and its split, gated feed-forward maps, post-norm blocks (Handout #11, 001, §4.2, §5.1, §9.3).
from .fused import (QKV, FusedAttention, batched_self_attention, fused_self_attention,  # noqa: E402
                    head_widths, split_qkv)
from .mlp import GATES, SILU, GatedFeedForward, gated_feed_forward  # noqa: E402
from .postnorm import post_norm_block  # noqa: E402

__all__ += [
    "QKV", "FusedAttention", "batched_self_attention", "fused_self_attention", "head_widths", "split_qkv",
    "GATES", "SILU", "GatedFeedForward", "gated_feed_forward", "post_norm_block",
]
