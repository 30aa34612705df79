"""Transformer encoder blocks (pre-norm and post-norm), the position-wise MLP and the encoder stack.

Pre-norm block at depth ℓ (rows are positions, every matrix T×D):

    X = LN_1(H^(ℓ))            B_att = MHA(X)          U = H^(ℓ) + B_att
    R = LN_2(U)                B_mlp = MLP(R)          H^(ℓ+1) = U + B_mlp

Post-norm block (Vaswani et al. 2017, §3.1):

    Y_att = H^(ℓ) + MHA(H^(ℓ))     U = LN_1(Y_att)
    Y_mlp = U + MLP(U)              H^(ℓ+1) = LN_2(Y_mlp)

Position-wise MLP with hidden width F (the same parameters at every row):

    Z_mlp = R W_1ᵀ + b_1  (T×F),   J_mlp = φ(Z_mlp),   B_mlp = J_mlp W_2ᵀ + b_2  (T×D)

for stored W_1 (F×D) and W_2 (D×F) with ``orientation="out_in"`` (as
torch's nn.Linear); ``"in_out"`` right-multiplies by W_1 (D×F) and W_2 (F×D).
φ is ReLU (ReLU'(0) = 0) unless another SymPy function is given.

A pre-norm stack ends with its own LayerNorm, H_enc = LN_final(H^(N)); the
final LayerNorm belongs to the stack, not to a block. Masks apply per block:
unrestricted (None), causal, or any allowed matrix; ``block_masks`` sets one
per block (a causal mask only in the last block does not undo what earlier
unrestricted blocks mixed in).

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Inside a complete
Transformer encoder" (the block equations, Table 22, the MLP with F = 4),
"Stack blocks along depth, then normalize the final representation", and
"Pre-norm, post-norm, and the backward path".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ops
from ..errors import ConventionError, ShapeError
from ..functions import relu
from ._naming import tagged
from .attention import multi_head
from .layers import residual
from .linear import linear
from .norms import layer_norm

NORM_PLACEMENTS = ("pre", "post")


@dataclass
class MLP:
    """Handles of a position-wise MLP: preactivation Z, hidden J = φ(Z), output B."""

    Z: ops.Ref
    J: ops.Ref
    B: ops.Ref


def mlp(L, X, W_1, b_1, W_2, b_2, *, orientation: str, activation=relu, tag: str | None = None,
        names: tuple = ("Z_mlp", "J_mlp", "B_mlp")) -> MLP:
    """Append Z = X W_1ᵀ + b_1, J = φ(Z), B = J W_2ᵀ + b_2 (``out_in``; see module docstring).

    Args:
        X: T×D input rows; W_1, W_2: weights in the given orientation; b_1 (1×F),
            b_2 (1×D): optional bias rows, added at every position.
        activation: a SymPy function class (``relu`` by default, ``gelu``, ``sp.tanh``).
        names: the three row names (tagged with ``tag``).

    Raises:
        ConventionError: unknown orientation. ShapeError: widths that do not fit.
    """
    z, j, b = names
    Z = linear(L, tagged(z, tag), X, W_1, b_1, orientation=orientation, note="MLP preactivation, row by row")
    J = L.define(tagged(j, tag), ops.Map(activation, Z), note="MLP hidden features")
    B = linear(L, tagged(b, tag), J, W_2, b_2, orientation=orientation, note="MLP branch output")
    return MLP(Z, J, B)


@dataclass
class EncoderParams:
    """Parameter handles of one encoder block.

    ``heads`` is a list of (W_Q, W_K, W_V) per head; ``W_O`` maps the
    concatenated heads back to width D; ``mlp`` is (W_1, b_1, W_2, b_2) with
    optional biases; ``ln1``/``ln2`` are (γ, β) pairs (either may be None).
    """

    heads: list
    W_O: ops.Ref
    mlp: tuple
    ln1: tuple = (None, None)
    ln2: tuple = (None, None)


@dataclass
class EncoderBlock:
    """Handles of one encoder block's rows (``sum_att``/``sum_mlp`` only for post-norm)."""

    norm: str
    ln1: object
    mha: object
    U: ops.Ref
    ln2: object
    mlp: MLP
    out: ops.Ref
    sum_att: ops.Ref | None = None
    sum_mlp: ops.Ref | None = None


def encoder_block(L, H, p: EncoderParams, *, orientation: str, eps, tag: str | None = None, mask=None,
                  norm: str = "pre", out_name: str | None = None, activation=relu,
                  empty_rows: str = "error") -> EncoderBlock:
    """Append one encoder block (pre-norm by default, post-norm with ``norm="post"``).

    Row names follow the handout: X, B_att, U, R, Z_mlp, J_mlp, B_mlp (each
    tagged with ``tag``), heads Q^{(tag,i)} …, and the output ``out_name``
    (default H^{tag}). Post-norm adds Y_att and Y_mlp, the sums before each
    LayerNorm.

    Args:
        H: T×D block input H^(ℓ).
        eps: LayerNorm's ε (exact, e.g. ``"1e-5"``), inside the square root.
        mask: None (unrestricted), ``"causal"``, or a T×T allowed matrix.
        norm: ``"pre"`` or ``"post"`` (named: the two layouts give different numbers).

    Raises:
        ConventionError: unknown ``norm`` or orientation.
        ShapeError: parameter shapes that do not fit H, or MHA/MLP outputs
            whose width is not D (the residual sums need equal shapes).
        MaskError: a query row with no allowed source (unless ``empty_rows="zero"``).
    """
    if norm not in NORM_PLACEMENTS:
        raise ConventionError(f"unknown norm placement {norm!r}; use 'pre' (LN inside each branch, as the "
                              f"Week 06 walkthrough) or 'post' (LN after each residual sum, as Vaswani et al.)")
    W_1, b_1, W_2, b_2 = p.mlp
    out_name = out_name or tagged("H", tag)
    if norm == "pre":
        ln1 = layer_norm(L, H, *p.ln1, eps=eps, name="X", tag=tag)
        mha = multi_head(L, ln1.out, p.heads, p.W_O, orientation=orientation, mask=mask, tag=tag, name="B_att",
                         empty_rows=empty_rows)
        U = residual(L, tagged("U", tag), H, mha.out, note="first residual: block input plus attention branch")
        ln2 = layer_norm(L, U, *p.ln2, eps=eps, name="R", tag=tag)
        m = mlp(L, ln2.out, W_1, b_1, W_2, b_2, orientation=orientation, activation=activation, tag=tag)
        out = residual(L, out_name, U, m.B, note="second residual: U plus MLP branch")
        return EncoderBlock("pre", ln1, mha, U, ln2, m, out)
    mha = multi_head(L, H, p.heads, p.W_O, orientation=orientation, mask=mask, tag=tag, name="B_att",
                     empty_rows=empty_rows)
    s1 = residual(L, tagged("Y_att", tag), H, mha.out, note="block input plus attention branch, before LN_1")
    ln1 = layer_norm(L, s1, *p.ln1, eps=eps, name="U", tag=tag)
    m = mlp(L, ln1.out, W_1, b_1, W_2, b_2, orientation=orientation, activation=activation, tag=tag)
    s2 = residual(L, tagged("Y_mlp", tag), ln1.out, m.B, note="U plus MLP branch, before LN_2")
    ln2 = layer_norm(L, s2, *p.ln2, eps=eps, name="LN_2", tag=tag)
    out = L.define(out_name, ln2.out, note="block output, LN_2(Y_mlp)")
    return EncoderBlock("post", ln1, mha, ln1.out, ln2, m, out, sum_att=s1, sum_mlp=s2)


@dataclass
class Encoder:
    """Handles of an encoder stack: its blocks, the final LayerNorm (or None) and the output rows."""

    blocks: list = field(default_factory=list)
    final: object = None
    out: ops.Ref | None = None


def encoder(L, H0, blocks: list, *, orientation: str, eps, mask=None, block_masks: list | None = None,
            norm: str = "pre", ln_final=(None, None), final: bool | None = None, final_name: str = "H_enc",
            activation=relu, empty_rows: str = "error") -> Encoder:
    """A stack of encoder blocks; block ℓ reads H^(ℓ) and writes H^(ℓ+1); then LN_final (pre-norm).

    Args:
        H0: T×D positioned input H^(0).
        blocks: one :class:`EncoderParams` per block (separate parameters per depth).
        mask: one visibility for every block (None: unrestricted).
        block_masks: one mask per block instead (e.g. ``[None, "causal"]``).
        ln_final: (γ, β) of the final LayerNorm.
        final: whether to append LN_final; default True for pre-norm, False for
            post-norm (whose blocks already end on a LayerNorm).

    Returns:
        :class:`Encoder`; ``out`` is H_enc (or H^(N) without a final LayerNorm).

    Raises:
        ShapeError: no blocks, or ``block_masks`` of the wrong length.
        ConventionError: both ``mask`` and ``block_masks`` given.
    """
    if not blocks:
        raise ShapeError("an encoder needs at least one block")
    if block_masks is not None:
        if mask is not None:
            raise ConventionError("give either mask (every block) or block_masks (one per block), not both")
        if len(block_masks) != len(blocks):
            raise ShapeError(f"block_masks has {len(block_masks)} entries for {len(blocks)} blocks; give one per block")
        masks = list(block_masks)
    else:
        masks = [mask] * len(blocks)
    out = Encoder()
    H = H0
    for ell, (p, m) in enumerate(zip(blocks, masks)):
        blk = encoder_block(L, H, p, orientation=orientation, eps=eps, tag=f"({ell})", mask=m, norm=norm,
                            out_name=f"H^{{({ell + 1})}}", activation=activation, empty_rows=empty_rows)
        out.blocks.append(blk)
        H = blk.out
    if final is None:
        final = norm == "pre"
    if final:
        out.final = layer_norm(L, H, *ln_final, eps=eps, name=final_name)
        out.out = out.final.out
    else:
        out.out = H
    return out
