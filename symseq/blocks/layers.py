"""Residual sums, the position-wise feed-forward map, and pre-norm decoder blocks and stacks.

Sources: Week 8 handout (000), §2 (H' = H + F(H), J = I + J_F) and §3:

    U^ℓ = H^ℓ + MHA_ℓ(LN_{ℓ,1}(H^ℓ))
    H^{ℓ+1} = U^ℓ + FF_ℓ(LN_{ℓ,2}(U^ℓ))
    FF(h) = ReLU(h W_1 + b_1) W_2 + b_2          W_1: d×m, W_2: m×d
    Z = LN_f(H^L) W_out + b_out                  W_out: d×v

Rows are positions; biases are 1×width rows added at every position.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ops
from ..errors import ShapeError
from ..functions import relu
from ._naming import tagged
from .attention import multi_head
from .linear import linear
from .norms import layer_norm


def residual(L, name: str, H, F, *, note: str = "residual sum"):
    """Append ``name := H + F`` (the identity path plus a computed change).

    Raises:
        ShapeError: when H and F differ in shape (names both).
    """
    if H.shape != F.shape:
        raise ShapeError(f"residual {name}: H is {H.shape[0]}×{H.shape[1]} but F(H) is {F.shape[0]}×{F.shape[1]}; "
                         f"a residual sum needs equal shapes")
    return L.define(name, H + F, note=note)


@dataclass
class FeedForward:
    pre: ops.Ref
    hidden: ops.Ref
    out: ops.Ref


def feed_forward(L, X, W_1, b_1, W_2, b_2, *, orientation: str, activation=relu, tag: str | None = None,
                 name: str = "FF") -> FeedForward:
    """FF(X) = φ(X W_1 + b_1) W_2 + b_2 row by row (same parameters at every position); φ = ReLU by default.

    ``activation`` is a SymPy function class (``relu``, ``gelu``, ``sp.tanh``).
    """
    pre = linear(L, tagged(f"a_{{{name}}}", tag), X, W_1, b_1, orientation=orientation)
    hidden = L.define(tagged(f"m_{{{name}}}", tag), ops.Map(activation, pre))
    out = linear(L, tagged(name, tag), hidden, W_2, b_2, orientation=orientation)
    return FeedForward(pre, hidden, out)


@dataclass
class BlockParams:
    """Parameter handles of one pre-norm decoder block.

    ``heads`` is a list of (W_Q, W_K, W_V); ``ln1``/``ln2`` are (γ, β) pairs
    (either may be None); ``ff`` is (W_1, b_1, W_2, b_2) with optional biases.
    """

    heads: list
    W_O: ops.Ref
    ff: tuple
    ln1: tuple = (None, None)
    ln2: tuple = (None, None)


@dataclass
class Block:
    ln1: object
    mha: object
    U: ops.Ref
    ln2: object
    ff: FeedForward
    out: ops.Ref


def decoder_block(L, H, p: BlockParams, *, orientation: str, tag: str, eps=0, mask="causal",
                  out_name: str | None = None) -> Block:
    """One pre-norm block: U = H + MHA(LN_1(H)); H' = U + FF(LN_2(U)) (000, §3)."""
    ln1 = layer_norm(L, H, *p.ln1, eps=eps, name="LN_1", tag=tag)
    mha = multi_head(L, ln1.out, p.heads, p.W_O, orientation=orientation, mask=mask, tag=tag)
    U = residual(L, tagged("U", tag), H, mha.out)
    ln2 = layer_norm(L, U, *p.ln2, eps=eps, name="LN_2", tag=tag)
    W_1, b_1, W_2, b_2 = p.ff
    ff = feed_forward(L, ln2.out, W_1, b_1, W_2, b_2, orientation=orientation, tag=tag)
    out = residual(L, out_name or tagged("H", tag), U, ff.out)
    return Block(ln1, mha, U, ln2, ff, out)


@dataclass
class Decoder:
    blocks: list = field(default_factory=list)
    final: object = None
    logits: ops.Ref | None = None


def decoder(L, H0, blocks: list, *, W_out, b_out=None, ln_f=(None, None), orientation: str, eps=0,
            mask="causal") -> Decoder:
    """A stack of pre-norm decoder blocks, final LayerNorm and readout Z = LN_f(H^L) W_out + b_out (000, §3).

    Block ℓ writes H^{(ℓ+1)}; the logits row is Z (T×v).
    """
    out = Decoder()
    H = H0
    for ell, p in enumerate(blocks):
        blk = decoder_block(L, H, p, orientation=orientation, tag=f"({ell})", eps=eps, mask=mask,
                            out_name=f"H^{{({ell + 1})}}")
        out.blocks.append(blk)
        H = blk.out
    out.final = layer_norm(L, H, *ln_f, eps=eps, name="LN_f")
    out.logits = linear(L, "Z", out.final.out, W_out, b_out, orientation=orientation, note="logits over the vocabulary")
    return out


def decoder_parameters(L, *, d: int, d_k: int, d_v: int, h: int, m: int, v: int, n_blocks: int = 1,
                       biases: bool = True, norms: bool = True) -> tuple[list, dict]:
    """Symbolic parameters (no values) for a decoder of the given sizes, named as the handouts name them.

    Returns (list of :class:`BlockParams`, dict with W_out, b_out, ln_f), for
    ``orientation="in_out"``: W_Q, W_K are d×d_k, W_V d×d_v, W_O h·d_v×d,
    W_1 d×m, W_2 m×d, W_out d×v.
    """
    blocks = []
    for ell in range(n_blocks):
        t = f"({ell})"
        heads = []
        for i in range(1, h + 1):
            ht = f"({ell},{i})"
            heads.append((L.parameter(tagged("W_Q", ht), shape=(d, d_k)),
                          L.parameter(tagged("W_K", ht), shape=(d, d_k)),
                          L.parameter(tagged("W_V", ht), shape=(d, d_v))))
        W_O = L.parameter(tagged("W_O", t), shape=(h * d_v, d))
        ff = (L.parameter(tagged("W_1", t), shape=(d, m)), L.parameter(tagged("b_1", t), shape=(1, m)) if biases else None,
              L.parameter(tagged("W_2", t), shape=(m, d)), L.parameter(tagged("b_2", t), shape=(1, d)) if biases else None)
        ln = lambda k: (L.parameter(tagged(f"gamma_{k}", t), shape=(1, d)),  # noqa: E731
                        L.parameter(tagged(f"beta_{k}", t), shape=(1, d))) if norms else (None, None)
        blocks.append(BlockParams(heads, W_O, ff, ln(1), ln(2)))
    head = {
        "W_out": L.parameter("W_out", shape=(d, v)),
        "b_out": L.parameter("b_out", shape=(1, v)) if biases else None,
        "ln_f": (L.parameter("gamma_f", shape=(1, d)), L.parameter("beta_f", shape=(1, d))) if norms else (None, None),
    }
    return blocks, head
