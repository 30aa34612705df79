"""The post-norm Transformer block: normalise after each residual sum.

For H (T×D, rows are positions)::

    U  = LN_1(H + MHA(H))
    H' = LN_2(U + FF(U))

against the pre-norm block of :func:`symseq.blocks.decoder_block`
(U = H + MHA(LN_1(H)), H' = U + FF(LN_2(U))). Both keep the width D. In the
pre-norm block each update has an identity path, d(x + g(LN(x)))/dx =
I + J_{g∘LN}; in the post-norm block the Jacobian of a sublayer is
J_LN (I + J_g), so every path passes through a LayerNorm.

Sources: Handout #11 (``001_d42a515eb3cd140c.txt``), §5.1 ("two
arrangements"); Vaswani et al. (2017), §3.1 (LayerNorm(x + Sublayer(x))).
"""

from __future__ import annotations

from ._naming import tagged
from .attention import multi_head
from .layers import Block, BlockParams, feed_forward, residual
from .norms import layer_norm


def post_norm_block(L, H, p: BlockParams, *, orientation: str, tag: str, eps=0, mask=None) -> Block:
    """Append one post-norm block, U = LN_1(H + MHA(H)), H' = LN_2(U + FF(U)); returns its handles.

    ``p`` holds the heads, W_O, the feed-forward weights and the two (γ, β)
    pairs, as for the pre-norm block. ``mask`` is None (an encoder) or
    ``"causal"``/a boolean matrix of allowed sources. In the returned
    :class:`Block`, ``U`` is the first normalised sum (row LN_1^{tag}) and
    ``out`` is H' (row LN_2^{tag}).

    Raises:
        ShapeError: when the weights do not fit or W_O does not return to D.
    """
    mha = multi_head(L, H, p.heads, p.W_O, orientation=orientation, mask=mask, tag=tag)
    R1 = residual(L, tagged("R_1", tag), H, mha.out, note="H + MHA(H), before normalisation")
    ln1 = layer_norm(L, R1, *p.ln1, eps=eps, name="LN_1", tag=tag)
    U = ln1.out
    W_1, b_1, W_2, b_2 = p.ff
    ff = feed_forward(L, U, W_1, b_1, W_2, b_2, orientation=orientation, tag=tag)
    R2 = residual(L, tagged("R_2", tag), U, ff.out, note="U + FF(U), before normalisation")
    ln2 = layer_norm(L, R2, *p.ln2, eps=eps, name="LN_2", tag=tag)
    return Block(ln1, mha, U, ln2, ff, ln2.out)


__all__ = ["post_norm_block"]
