"""The Transformer block (pre-norm or post-norm), its position-wise MLP, residual sums, and stacks of blocks.

Pre-norm block (Week 8 handout 000, §3; Week 06 handout 004, "Inside a complete
Transformer encoder"), rows are positions, every matrix T×D::

    X = LN_1(H)           B_att = MHA(X)          U = H + B_att
    R = LN_2(U)           B_mlp = MLP(R)          H' = U + B_mlp

Post-norm block (Vaswani et al. 2017, §3.1; Handout #11 001, §5.1; Week 06,
"Pre-norm, post-norm, and the backward path")::

    Y_att = H + MHA(H)    U = LN_1(Y_att)
    Y_mlp = U + MLP(U)    H' = LN_2(Y_mlp)

Position-wise MLP with hidden width F, the same parameters at every row::

    Z = X W_1 + b_1 (T×F),   J = φ(Z),   B = J W_2 + b_2 (T×D)

with ``orientation="in_out"`` (W_1: D×F, as the Week 8 handout writes
FF(h) = ReLU(h W_1 + b_1) W_2 + b_2); ``"out_in"`` right-multiplies by the
transposes of stored W_1 (F×D) and W_2 (D×F), as torch's nn.Linear. φ is ReLU
(ReLU'(0) = 0) unless another SymPy function is given.

The handouts name the rows of one block differently; :class:`BlockNames` holds
each handout's names (:data:`DECODER_NAMES` for Week 8 and Handout #11,
:data:`ENCODER_NAMES` for Week 06). A stack (:func:`encoder`) applies blocks
along depth, block ℓ writing H^(ℓ+1), then a final LayerNorm of its own;
:func:`decoder` is a causal stack with a readout Z = LN_f(H^(L)) W_out + b_out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import ops
from ..errors import ConventionError, ShapeError
from ..functions import relu
from ._args import matrices
from ._naming import tagged
from .attention import MultiHead, multi_head
from .linear import linear
from .norms import Norm, layer_norm

NORM_PLACEMENTS = ("pre", "post")


def residual(L, name: str, H, F, *, note: str = "residual sum"):
    """Append ``name := H + F`` (the identity path plus a computed change; Week 8, §2: H' = H + F(H)).

    Raises:
        ShapeError: when H or F is a scalar, or they differ in shape (names both).
    """
    matrices(f"residual {name}", H=H, F=F)
    if H.shape != F.shape:
        raise ShapeError(f"residual {name}: H is {H.shape[0]}×{H.shape[1]} but F(H) is {F.shape[0]}×{F.shape[1]}; "
                         f"a residual sum needs equal shapes")
    return L.define(name, H + F, note=note)


@dataclass
class MLP:
    """Handles of a position-wise MLP: preactivation Z (T×F), hidden features J = φ(Z), output B (T×D)."""

    Z: ops.Ref
    J: ops.Ref
    B: ops.Ref


def _mlp_names(names) -> tuple:
    if isinstance(names, str):  # "FF" names the rows a_{FF}, m_{FF}, FF
        return f"a_{{{names}}}", f"m_{{{names}}}", names
    if len(names) != 3:
        raise ConventionError(f"an MLP has three rows (preactivation, hidden, output); got names {names!r}")
    return tuple(names)


def mlp(L, X, W_1, b_1, W_2, b_2, *, orientation: str, activation=relu, tag: str | None = None,
        names="FF") -> MLP:
    """Append Z = X W_1 + b_1, J = φ(Z), B = J W_2 + b_2 row by row (see the module docstring).

    Args:
        X: T×D input rows; W_1, W_2: weights in the given orientation; b_1 (1×F),
            b_2 (1×D): optional bias rows (None), added at every position.
        activation: a SymPy function class (``relu`` by default, ``gelu``, ``sp.tanh``).
        names: the three row names (tagged with ``tag``), or one name ``N`` for
            rows a_{N}, m_{N}, N (``"FF"``, Week 8's FF(h); Week 06 uses
            ``("Z_mlp", "J_mlp", "B_mlp")``).

    Raises:
        ConventionError: unknown orientation, or not three names. ShapeError: a scalar where a matrix is needed (names the argument), or widths
            that do not fit.
    """
    matrices("mlp", X=X, W_1=W_1, b_1=b_1, W_2=W_2, b_2=b_2)
    z, j, b = _mlp_names(names)
    Z = linear(L, tagged(z, tag), X, W_1, b_1, orientation=orientation, note="MLP preactivation, row by row")
    J = L.define(tagged(j, tag), ops.Map(activation, Z), note="MLP hidden features")
    B = linear(L, tagged(b, tag), J, W_2, b_2, orientation=orientation, note="MLP branch output")
    return MLP(Z, J, B)


@dataclass
class BlockParams:
    """Parameter handles of one Transformer block.

    ``heads`` is a list of (W_Q, W_K, W_V) per head; ``W_O`` maps the
    concatenated heads back to width D; ``mlp`` is (W_1, b_1, W_2, b_2) with
    optional biases (None); ``ln1``/``ln2`` are (γ, β) pairs (either may be None).
    """

    heads: list
    W_O: ops.Ref
    mlp: tuple
    ln1: tuple = (None, None)
    ln2: tuple = (None, None)


def block_weights(p: BlockParams) -> dict:
    """The matrices of a block's parameters by the name an error gives them: ``W_Q of head 1 (p.heads[0][0])``,
    ``W_1 (p.mlp[0])``, ``gamma of LN_1 (p.ln1[0])`` (a bias or norm parameter left out is None)."""
    out = {f"{w} of head {i + 1} (p.heads[{i}][{j}])": W for i, triple in enumerate(p.heads)
           for j, (w, W) in enumerate(zip(("W_Q", "W_K", "W_V"), triple))}
    out["W_O (p.W_O)"] = p.W_O
    out.update({f"{w} (p.mlp[{j}])": W for j, (w, W) in enumerate(zip(("W_1", "b_1", "W_2", "b_2"), p.mlp))})
    for ln in ("ln1", "ln2"):
        out.update({f"{w} of {ln.upper()[:2]}_{ln[-1]} (p.{ln}[{j}])": W
                    for j, (w, W) in enumerate(zip(("gamma", "beta"), getattr(p, ln)))})
    return out


@dataclass(frozen=True)
class BlockNames:
    """The row names of a block's parts, as a handout names them (each tagged with the block's tag).

    ``ln1``/``ln2`` name the LayerNorm rows of a pre-norm block and
    ``post_ln1``/``post_ln2`` those of a post-norm block (the same unless
    given); ``U`` is the pre-norm first residual; ``sum_att``/``sum_mlp`` the
    post-norm sums before each LayerNorm; ``out`` the block output. A post-norm
    block writes its output as a row of its own when ``post_out_row``, else it
    ends on the LN_2 row.
    """

    ln1: str = "LN_1"
    attn: str = "MHA"
    U: str = "U"
    ln2: str = "LN_2"
    mlp: tuple | str = "FF"
    sum_att: str = "R_1"
    sum_mlp: str = "R_2"
    out: str = "H"
    post_ln1: str = ""
    post_ln2: str = ""
    post_out_row: bool = False


DECODER_NAMES = BlockNames()  # Week 8 (000, §3) and Handout #11 (001, §5.1)
ENCODER_NAMES = BlockNames(ln1="X", attn="B_att", ln2="R", mlp=("Z_mlp", "J_mlp", "B_mlp"), sum_att="Y_att",
                           sum_mlp="Y_mlp", post_ln1="U", post_ln2="LN_2", post_out_row=True)  # Week 06 (004)


@dataclass
class TransformerBlock:
    """Handles of one block's rows; ``sum_att``/``sum_mlp`` only for post-norm (there ``U`` is LN_1's output)."""

    norm: str
    ln1: Norm
    mha: MultiHead
    U: ops.Ref
    ln2: Norm
    mlp: MLP
    out: ops.Ref
    sum_att: ops.Ref | None = None
    sum_mlp: ops.Ref | None = None


def transformer_block(L, H, p: BlockParams, *, orientation: str, eps=0, tag: str | None = None, mask=None,
                      norm: str = "pre", names: BlockNames = DECODER_NAMES, out_name: str | None = None,
                      activation=relu, empty_rows: str = "error") -> TransformerBlock:
    """Append one Transformer block, pre-norm (default) or post-norm (see the module docstring).

    Args:
        H: T×D block input H^(ℓ).
        p: the block's parameters.
        eps: LayerNorm's ε (exact, e.g. ``"1e-5"``), inside the square root.
        mask: None (unrestricted), ``"causal"``, a T×T boolean keep-matrix (True = may attend), or a
            :class:`~symseq.ops.Mask` naming its convention (``keep``, ``exclude``, ``additive``).
        norm: ``"pre"`` or ``"post"`` (named: the two layouts give different numbers).
        names: the handout's row names (:data:`DECODER_NAMES`, :data:`ENCODER_NAMES`).
        out_name: the output row's name (default ``names.out`` tagged with ``tag``).
        activation: the MLP's φ.
        empty_rows: ``"error"`` (default) or ``"zero"`` for a query row with no allowed source.

    Returns:
        :class:`TransformerBlock`; ``out`` is H^(ℓ+1) (T×D).

    Raises:
        ConventionError: unknown ``norm`` or orientation.
        ShapeError: a scalar where a matrix is needed (names the argument), parameter shapes that do not fit H, or MHA/MLP outputs whose
            width is not D.
        MaskError: a mask entry that is no value of its convention, or a query row with no allowed source
            (unless ``empty_rows="zero"``); checked before any row is appended.
    """
    if norm not in NORM_PLACEMENTS:
        raise ConventionError(f"unknown norm placement {norm!r}; use 'pre' (LN inside each branch, as the "
                              f"Week 06 walkthrough) or 'post' (LN after each residual sum, as Vaswani et al.)")
    W_1, b_1, W_2, b_2 = p.mlp
    matrices("transformer_block", H=H, **block_weights(p))
    T = H.shape[0]
    mask = ops.allowed_matrix(mask, (T, T), empty_rows, what=f"attention {tagged('A', tag)}")
    out_name = out_name or tagged(names.out, tag)

    def attention(X):
        return multi_head(L, X, p.heads, p.W_O, orientation=orientation, mask=mask, tag=tag, name=names.attn,
                          empty_rows=empty_rows)

    def branch(X):
        return mlp(L, X, W_1, b_1, W_2, b_2, orientation=orientation, activation=activation, tag=tag,
                   names=names.mlp)

    if norm == "pre":
        ln1 = layer_norm(L, H, *p.ln1, eps=eps, name=names.ln1, tag=tag)
        mha = attention(ln1.out)
        U = residual(L, tagged(names.U, tag), H, mha.out, note="first residual: block input plus attention branch")
        ln2 = layer_norm(L, U, *p.ln2, eps=eps, name=names.ln2, tag=tag)
        m = branch(ln2.out)
        out = residual(L, out_name, U, m.B, note="second residual: U plus MLP branch")
        return TransformerBlock("pre", ln1, mha, U, ln2, m, out)
    mha = attention(H)
    s1 = residual(L, tagged(names.sum_att, tag), H, mha.out, note="block input plus attention branch, before LN_1")
    ln1 = layer_norm(L, s1, *p.ln1, eps=eps, name=names.post_ln1 or names.ln1, tag=tag)
    m = branch(ln1.out)
    s2 = residual(L, tagged(names.sum_mlp, tag), ln1.out, m.B, note="U plus MLP branch, before LN_2")
    ln2 = layer_norm(L, s2, *p.ln2, eps=eps, name=names.post_ln2 or names.ln2, tag=tag)
    out = L.define(out_name, ln2.out, note="block output, LN_2 of the second sum") if names.post_out_row else ln2.out
    return TransformerBlock("post", ln1, mha, ln1.out, ln2, m, out, sum_att=s1, sum_mlp=s2)


@dataclass
class Encoder:
    """Handles of a stack of blocks: its blocks, the final LayerNorm (or None) and the output rows."""

    blocks: list = field(default_factory=list)
    final: Norm | None = None
    out: ops.Ref | None = None


def encoder(L, H0, blocks: list, *, orientation: str, eps=0, mask=None, block_masks: list | None = None,
            norm: str = "pre", ln_final=(None, None), final: bool | None = None, final_name: str = "H_enc",
            names: BlockNames = DECODER_NAMES, activation=relu, empty_rows: str = "error") -> Encoder:
    """A stack of blocks; block ℓ reads H^(ℓ) and writes H^(ℓ+1); then a final LayerNorm (pre-norm).

    Args:
        H0: T×D positioned input H^(0).
        blocks: one :class:`BlockParams` per block (separate parameters per depth).
        mask: one visibility for every block (None: unrestricted; ``"causal"``; a T×T boolean keep-matrix;
            a :class:`~symseq.ops.Mask`).
        block_masks: one mask per block instead (e.g. ``[None, "causal"]``: a causal
            mask only in the last block does not undo what earlier blocks mixed in).
            Every block's mask is checked before the first block's rows are appended.
        ln_final: (γ, β) of the final LayerNorm, row ``final_name``.
        final: whether to append it; default True for pre-norm, False for
            post-norm (whose blocks already end on a LayerNorm).
        names: the handout's row names (:class:`BlockNames`).

    Returns:
        :class:`Encoder`; ``out`` is the final LayerNorm's output (or H^(N) without one).

    Raises:
        ShapeError: no blocks, a scalar where a matrix is needed (names the argument), ``block_masks`` of the wrong length, or a mask that is
            not T×T.
        ConventionError: both ``mask`` and ``block_masks`` given.
        MaskError: a mask entry that is no value of its convention (names the block), or an empty mask row.
    """
    if not blocks:
        raise ShapeError("an encoder needs at least one block")
    matrices("encoder", H0=H0, **{f"{what} of block {ell} (blocks[{ell}])": W for ell, p in enumerate(blocks)
                                  for what, W in block_weights(p).items()},
             **{"γ of the final LayerNorm (ln_final[0])": ln_final[0], "β of the final LayerNorm (ln_final[1])": ln_final[1]})
    if block_masks is not None:
        if mask is not None:
            raise ConventionError("give either mask (every block) or block_masks (one per block), not both")
        if len(block_masks) != len(blocks):
            raise ShapeError(f"block_masks has {len(block_masks)} entries for {len(blocks)} blocks; give one per block")
        masks = list(block_masks)
    else:
        masks = [mask] * len(blocks)
    T = H0.shape[0]
    masks = [ops.allowed_matrix(m, (T, T), empty_rows, what=f"attention {tagged('A', f'({ell})')}")
             for ell, m in enumerate(masks)]
    out = Encoder()
    H = H0
    for ell, (p, m) in enumerate(zip(blocks, masks)):
        blk = transformer_block(L, H, p, orientation=orientation, eps=eps, tag=f"({ell})", mask=m, norm=norm,
                                names=names, out_name=f"H^{{({ell + 1})}}", activation=activation,
                                empty_rows=empty_rows)
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


@dataclass
class Decoder:
    """Handles of a decoder: its blocks, the final LayerNorm LN_f and the logits Z (T×v)."""

    blocks: list = field(default_factory=list)
    final: Norm | None = None
    logits: ops.Ref | None = None


def decoder(L, H0, blocks: list, *, W_out, b_out=None, ln_f=(None, None), orientation: str, eps=0,
            mask="causal") -> Decoder:
    """A causal stack of pre-norm blocks, then Z = LN_f(H^(L)) W_out + b_out (Week 8, 000, §3).

    Block ℓ writes H^{(ℓ+1)}; the rows are named as :data:`DECODER_NAMES`.

    Raises:
        ShapeError, ConventionError, MaskError: as :func:`encoder` and :func:`linear` (a scalar where a matrix is
            needed names the argument).
    """
    matrices("decoder", H0=H0, W_out=W_out, b_out=b_out, **{"γ of LN_f (ln_f[0])": ln_f[0], "β of LN_f (ln_f[1])": ln_f[1]})
    stack = encoder(L, H0, blocks, orientation=orientation, eps=eps, mask=mask, ln_final=ln_f, final=True,
                    final_name="LN_f", names=DECODER_NAMES)
    logits = linear(L, "Z", stack.out, W_out, b_out, orientation=orientation, note="logits over the vocabulary")
    return Decoder(stack.blocks, stack.final, logits)


def decoder_parameters(L, *, d: int, d_k: int, d_v: int, h: int, m: int, v: int, n_blocks: int = 1,
                       biases: bool = True, norms: bool = True) -> tuple[list, dict]:
    """Symbolic parameters (no values) for a decoder of the given sizes, named as the Week 8 handout names them.

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
