"""Visibility masks: one Mask type with its convention named (keep, exclude, additive), one check shared by
masks.check and every block, causal, key padding, combined (Week 06 handout, 004, "Padding changes visibility ...";
torch's F.scaled_dot_product_attention and nn.MultiheadAttention conventions)."""

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import ConventionError, Ledger, MaskError, ShapeError, blocks, evaluate, ops

masks = blocks.masks
Mask = blocks.Mask


def test_causal_is_the_lower_triangle_with_distinct_sizes():
    np.testing.assert_array_equal(masks.causal(3, 4), [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(masks.causal(2), [[1, 0], [1, 1]])
    assert masks.full(2, 3).all() and masks.full(2, 3).shape == (2, 3)
    with pytest.raises(ShapeError, match="T \\(queries\\) must be a positive integer; got 0"):
        masks.causal(0)


def test_key_padding_repeats_the_source_validity_on_every_query_row():
    allowed = masks.key_padding([1, 1, 0, 1, 0], T=3)
    np.testing.assert_array_equal(allowed, [[1, 1, 0, 1, 0]] * 3)
    np.testing.assert_array_equal(masks.key_padding([True, False]), [[1, 0], [1, 0]])
    # torch's key_padding_mask marks the padding (True = ignored): the same visibility once its convention is named
    np.testing.assert_array_equal(masks.key_padding(Mask.exclude([False, False, True, False, True]), T=3), allowed)
    with pytest.raises(MaskError, match="marks no position as valid"):
        masks.key_padding([0, 0, 0])
    with pytest.raises(MaskError, match=r"key padding mask: entry \(position 1\) is 2"):
        masks.key_padding([1, 2])
    with pytest.raises(ShapeError, match="must be a vector"):
        masks.key_padding([[1, 0], [1, 1]])


def test_combined_padding_and_causal_mask():
    np.testing.assert_array_equal(masks.padding_causal([1, 1, 1, 0]),
                                  [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]])
    assert masks.empty_rows(masks.padding_causal([1, 1, 0])) == []
    assert masks.empty_rows(masks.padding_causal([0, 0, 1, 1])) == [0, 1]  # left padding empties the first rows
    np.testing.assert_array_equal(masks.combine([[1, 1], [0, 1]], [[1, 0], [1, 1]]), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(masks.combine(Mask.exclude([[0, 0], [1, 0]]), Mask.additive([[0, -np.inf], [0, 0]])),
                                  [[1, 0], [0, 1]])
    with pytest.raises(ShapeError, match="same shape .* got 2×2, 2×3"):
        masks.combine(np.ones((2, 2), bool), np.ones((2, 3), bool))
    with pytest.raises(ShapeError, match="at least one mask"):
        masks.combine()


def test_check_names_wrong_shapes_and_values():
    with pytest.raises(ShapeError, match="has shape 3×3 but the scores are 3×4"):
        masks.check(masks.causal(3), (3, 4))
    with pytest.raises(ShapeError, match="must be a matrix"):
        masks.check([1, 0, 1])
    with pytest.raises(MaskError, match=r"entry \(row 0, column 1\) is 0.5"):
        masks.check([[1, 0.5]])
    with pytest.raises(ShapeError, match="is empty"):
        masks.validity([])
    with pytest.raises(ShapeError, match="has 3 entries but there are 4 positions"):
        masks.validity([1, 1, 0], 4)
    with pytest.raises(ShapeError, match="'causal' needs the shape of the scores"):
        masks.check("causal")
    with pytest.raises(ShapeError, match="rows of different lengths"):
        masks.check([[1, 0], [1]])


def test_torch_convention_is_the_complement():
    allowed = masks.padding_causal([1, 1, 0])
    np.testing.assert_array_equal(masks.torch_convention(allowed), ~allowed)
    np.testing.assert_array_equal(Mask.keep(allowed).to("exclude"), ~allowed)


def test_left_padding_with_a_causal_mask_is_refused_by_attention_naming_the_row():
    L = Ledger()
    Q = L.input("Q", [[1, 0], [0, 1], [1, 1]])
    with pytest.raises(MaskError, match="query position 0 has no allowed source"):
        blocks.scaled_dot_product(L, Q, Q, Q, mask=masks.padding_causal([0, 1, 1]))


def test_key_padding_gives_padded_sources_weight_zero_and_renormalises():
    L = Ledger()
    S = L.input("S", [[0, sp.log(2), 5], [sp.log(3), 0, 7]])
    A = L.define("A", ops.SoftmaxRows(S, masks.key_padding([1, 1, 0], T=2)))
    assert L.value(A.name) == sp.Matrix([[sp.Rational(1, 3), sp.Rational(2, 3), 0],
                                         [sp.Rational(3, 4), sp.Rational(1, 4), 0]])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8).filter(lambda m: m[0]))
def test_combined_mask_allows_exactly_real_sources_up_to_the_query(m):
    allowed = masks.padding_causal(m)
    T = len(m)
    for t in range(T):
        for j in range(T):
            assert allowed[t, j] == (j <= t and m[j])
    assert masks.empty_rows(allowed) == []  # right-aligned real first token: every row keeps source 0


# ---------------------------------------------------------------------------
# the findings of issue 12: masks that were read as something they are not
# ---------------------------------------------------------------------------

TRIL = np.tril(np.ones((3, 3), dtype=bool))
ADDITIVE = np.where(TRIL, 0.0, -np.inf)  # torch's float attn_mask for causal attention

# (mask, the entry and value the error must name, a phrase of the fix)
BAD = {
    "0.5": ([[1, 0, 0], [1, 0.5, 0], [1, 1, 1]], r"row 1, column 1\) is 0.5", "True/False"),
    "2": ([[1, 0, 0], [1, 1, 0], [2, 1, 1]], r"row 2, column 0\) is 2", "True/False"),
    "-1": ([[1, -1, 0], [1, 1, 0], [1, 1, 1]], r"row 0, column 1\) is -1", "True/False"),
    "'False'": ([[True, False, False], [True, "False", False], [True, True, True]],
                r"row 1, column 1\) is 'False'", "not text"),
    "NaN": ([[1, 0, 0], [1, 1, np.nan], [1, 1, 1]], r"row 1, column 2\) is nan", "True/False"),
    "float 0/1": (TRIL.astype(float), r"row 0, column 0\) is 1.0", r"is a keep-mask: pass mask.astype\(bool\)"),
    "additive": (ADDITIVE, r"row 0, column 1\) is -inf", r"pass Mask.additive\(mask\)"),
}


def _blocks_with_mask(mask, **kw):
    """Every API that takes an attention mask, each on a fresh ledger: T = S = 3, D = 2."""
    def ledger():
        L = Ledger()
        return L, L.input("X", [[1, 0], [0, 1], [1, 1]])

    def sdpa():
        L, X = ledger()
        return blocks.scaled_dot_product(L, X, X, X, mask=mask, **kw)

    def softmax_rows():
        L, X = ledger()
        return ops.SoftmaxRows(X @ X.T, mask, **kw)

    def head():
        L, X = ledger()
        I2 = L.parameter("I", sp.eye(2))
        return blocks.attention_head(L, X, I2, I2, I2, orientation="in_out", mask=mask, **kw)

    def fused():
        L, X = ledger()
        return blocks.fused_self_attention(L, X, L.parameter("W", sp.Matrix.hstack(*[sp.eye(2)] * 3)),
                                           L.parameter("W_O", sp.eye(2)), n_heads=1, orientation="in_out",
                                           mask=mask, **kw)

    def batched():
        L, X = ledger()
        batch = mask if mask is None or isinstance(mask, str) else [mask, mask]  # B = 2 items, the same mask
        return blocks.batched_self_attention(L, [X, X], L.parameter("W", sp.Matrix.hstack(*[sp.eye(2)] * 3)),
                                             L.parameter("W_O", sp.eye(2)), n_heads=1, orientation="in_out",
                                             masks=batch, **kw)

    def block():
        L, X = ledger()
        I2 = L.parameter("I", sp.eye(2))
        p = blocks.BlockParams(heads=[(I2, I2, I2)], W_O=I2, mlp=(I2, None, I2, None))
        return blocks.transformer_block(L, X, p, orientation="in_out", mask=mask, **kw)

    def encoder():
        L, X = ledger()
        I2 = L.parameter("I", sp.eye(2))
        p = blocks.BlockParams(heads=[(I2, I2, I2)], W_O=I2, mlp=(I2, None, I2, None))
        return blocks.encoder(L, X, [p, p], orientation="in_out", block_masks=[None, mask], **kw)

    return {"check": lambda: masks.check(mask, (3, 3), **kw), "scaled_dot_product": sdpa,
            "SoftmaxRows": softmax_rows, "attention_head": head, "fused_self_attention": fused,
            "batched_self_attention": batched, "transformer_block": block, "encoder block_masks": encoder}


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("api", list(_blocks_with_mask(None)))
def test_a_mask_entry_that_is_no_value_of_the_convention_is_refused_everywhere_naming_it(case, api):
    """0.5, 2, −1, "False" and NaN were read as "allowed" by the batched attention, a 0/1 float mask as a keep-mask
    and torch's additive 0/−∞ mask inverted (anti-causal): now every API refuses them with a MaskError that names
    the entry, its value, the conventions and the fix."""
    mask, where, fix = BAD[case]
    with pytest.raises(MaskError) as err:
        _blocks_with_mask(mask)[api]()
    msg = str(err.value)
    assert re.search(where, msg), msg
    assert re.search(fix, msg), msg
    assert "Mask.keep(m)" in msg and "Mask.exclude(m)" in msg and "Mask.additive(m)" in msg


def test_an_additive_torch_mask_named_additive_gives_causal_weights_not_anti_causal():
    """The batched block read torch's float mask (0 allowed, −∞ excluded) as booleans, inverting it: query 0 read
    only the future. Named additive it is the causal mask; unnamed it is refused."""
    torch = pytest.importorskip("torch")
    additive = torch.zeros(3, 3, dtype=torch.float64).masked_fill(~torch.tril(torch.ones(3, 3, dtype=torch.bool)),
                                                                  float("-inf"))

    def weights(m):
        L = Ledger()
        X = L.input("X", [[1, 0], [0, 1], [1, 1]])
        W = L.parameter("W", sp.Matrix.hstack(*[sp.eye(2)] * 3))
        res = blocks.batched_self_attention(L, [X], W, L.parameter("W_O", sp.eye(2)), n_heads=1,
                                            orientation="in_out", masks=m, empty_rows="zero")
        return L.value(res[0].heads[0].A.name)

    A = weights(Mask.additive(additive[None]))
    assert A == weights(TRIL[None])
    assert A[0, 0] == 1 and A[0, 1] == 0 and A[0, 2] == 0  # the first query reads itself only
    with pytest.raises(MaskError, match=r"\(batch item 0, row 0, column 1\) is -inf.*Mask.additive\(mask\)"):
        weights(additive[None])


def test_a_float_01_mask_is_read_only_with_its_convention():
    torch = pytest.importorskip("torch")
    tril = torch.tril(torch.ones(3, 4))  # float32, as PyTorch code builds it
    with pytest.raises(MaskError, match=r"is a keep-mask: pass mask.astype\(bool\)"):
        masks.check(tril, (3, 4))
    np.testing.assert_array_equal(masks.check(Mask.keep(tril), (3, 4)), masks.causal(3, 4))
    np.testing.assert_array_equal(masks.check(Mask.exclude(1 - tril), (3, 4)), masks.causal(3, 4))
    np.testing.assert_array_equal(masks.check(tril.numpy().astype(bool), (3, 4)), masks.causal(3, 4))
    grad = torch.tril(torch.ones(3, 3, dtype=torch.float64, requires_grad=True))  # a tensor with grad is read too
    assert Mask.keep(grad) == Mask.keep(TRIL)


def test_the_mask_type_names_its_convention_and_refuses_values_outside_it():
    keep, exclude, additive = Mask.keep(TRIL), Mask.exclude(~TRIL), Mask.additive(ADDITIVE)
    assert keep == exclude == additive and keep != Mask.keep(~TRIL)
    assert (keep.convention, exclude.convention, additive.convention) == ("keep", "exclude", "additive")
    assert repr(additive) == "Mask.additive(<3×3: 6 of 9 allowed>)"
    np.testing.assert_array_equal(exclude.to("keep"), TRIL)
    np.testing.assert_array_equal(keep.to("additive"), ADDITIVE)
    assert Mask.additive(sp.Matrix([[0, -sp.oo], [0, 0]])) == Mask.keep([[1, 0], [1, 1]])  # exact −∞ too
    with pytest.raises(ValueError):
        keep.allowed[0, 1] = True  # read-only: a mask cannot change after it was checked
    with pytest.raises(MaskError, match=r"\(row 0, column 1\) is -1000000000.0.*not −∞"):
        Mask.additive(np.where(TRIL, 0.0, -1e9))
    with pytest.raises(MaskError, match=r"\(row 0, column 0\) is True.*Mask.keep\(m\) or Mask.exclude\(m\)"):
        Mask.additive(TRIL)
    with pytest.raises(MaskError, match=r"\(row 0, column 1\) is 0.5; Mask.exclude takes True/False or 1/0"):
        Mask.exclude([[1, 0.5]])
    with pytest.raises(MaskError, match=r"\(row 0, column 0\) is nan"):
        Mask.keep([[np.nan, 1.0]])
    with pytest.raises(MaskError, match="already Mask.keep"):
        Mask.exclude(keep)
    with pytest.raises(ConventionError, match="unknown mask convention 'allow'; use one of keep, exclude, additive"):
        Mask(TRIL, "allow")
    with pytest.raises(ShapeError, match="single value"):
        Mask.keep(True)


def test_unknown_mask_names_are_refused_by_check_and_blocks_alike():
    for api, run in _blocks_with_mask("Causal").items():
        with pytest.raises(MaskError, match="unknown mask 'Causal'; use 'causal'"):
            run()


# ---------------------------------------------------------------------------
# one check: masks.check accepts and refuses exactly what the blocks do
# ---------------------------------------------------------------------------

def _outcome(run):
    """("ok", allowed) or (error type, message without the owner's label)."""
    try:
        out = run()
    except (MaskError, ShapeError, ConventionError) as e:
        return type(e).__name__, re.sub(r"^attention( A)?( mask)?", "", str(e))
    allowed = out if isinstance(out, np.ndarray) or out is None else getattr(out, "allowed", None)
    if allowed is None and hasattr(out, "heads"):
        allowed = out.heads[0].allowed
    return "ok", None if allowed is None else allowed.tobytes()


@st.composite
def candidate_masks(draw):
    T, S = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    m = np.array(draw(st.lists(st.lists(st.booleans(), min_size=S, max_size=S), min_size=T, max_size=T)))
    i, j = draw(st.integers(0, T - 1)), draw(st.integers(0, S - 1))
    form = draw(st.sampled_from(["bool", "int", "list", "sympy", "keep", "exclude", "additive", "float", "raw additive",
                                 "causal", "Causal", "0.5", "2", "'False'", "NaN", "wrong shape", "None"]))
    bad = {"0.5": 0.5, "2": 2, "'False'": "False", "NaN": float("nan")}
    if form in bad:
        out = m.astype(object)
        out[i, j] = bad[form]
        return T, S, out.tolist()
    return T, S, {"bool": m, "int": m.astype(int), "list": m.tolist(), "sympy": sp.Matrix(m.astype(int)),
                  "keep": Mask.keep(m), "exclude": Mask.exclude(~m),
                  "additive": Mask.additive(np.where(m, 0.0, -np.inf)),
                  "float": m.astype(float), "raw additive": np.where(m, 0.0, -np.inf), "causal": "causal",
                  "Causal": "Causal", "wrong shape": np.ones((T + 1, S), dtype=bool), "None": None}[form]


@settings(max_examples=150, deadline=None)
@given(candidate_masks(), st.sampled_from(["error", "zero"]))
def test_check_and_the_blocks_accept_and_refuse_the_same_masks(case, empty_rows):
    T, S, mask = case
    L = Ledger()
    Q, K = L.input("Q", shape=(T, 2)), L.input("K", shape=(S, 2))
    want = _outcome(lambda: masks.check(mask, (T, S), empty_rows=empty_rows))
    assert _outcome(lambda: blocks.scaled_dot_product(L, Q, K, K, mask=mask, empty_rows=empty_rows)) == want
    assert _outcome(lambda: ops.SoftmaxRows(Q @ K.T, mask, empty_rows=empty_rows)) == want


def test_check_accepts_what_the_blocks_accept_with_the_same_defaults():
    """masks.check refused "causal" (a ShapeError) and accepted empty rows by default, both unlike the blocks."""
    L = Ledger()
    X = L.input("X", shape=(3, 2))
    np.testing.assert_array_equal(masks.check("causal", (3, 3)), blocks.scaled_dot_product(L, X, X, X,
                                                                                            mask="causal").allowed)
    empty = np.array([[1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=bool)
    for run in (lambda: masks.check(empty), lambda: blocks.scaled_dot_product(L, X, X, X, mask=empty, tag="2")):
        with pytest.raises(MaskError, match="query position 1 has no allowed source"):
            run()
    assert masks.empty_rows(empty) == [1]


def test_a_refused_mask_appends_no_row():
    """The blocks appended Q, K, V and S (and a stack its first blocks) before they looked at the mask."""
    L = Ledger()
    X = L.input("X", shape=(3, 2))
    I2 = L.parameter("I", sp.eye(2))
    p = blocks.BlockParams(heads=[(I2, I2, I2)], W_O=I2, mlp=(I2, None, I2, None))
    before = len(L)
    with pytest.raises(MaskError):
        blocks.attention_head(L, X, I2, I2, I2, orientation="in_out", mask=BAD["0.5"][0])
    with pytest.raises(MaskError):
        blocks.scaled_dot_product(L, X, X, X, mask=ADDITIVE)
    with pytest.raises(MaskError, match=r"attention A\^\{\(1\)\} mask: entry \(row 0, column 1\) is -1"):
        blocks.encoder(L, X, [p, p], orientation="in_out", block_masks=["causal", BAD["-1"][0]])
    assert len(L) == before


# ---------------------------------------------------------------------------
# the three conventions are one visibility: against torch, and as a property
# ---------------------------------------------------------------------------

def _weights(T, S, d_k, conventions: dict, q, k, empty_rows="error"):
    """Attention weights A (NumPy float64) for each named mask, from one ledger with one head per mask."""
    L = Ledger()
    Q, K = L.input("Q", shape=(T, d_k)), L.input("K", shape=(S, d_k))
    V = L.input("V", sp.eye(S))
    heads = {name: blocks.scaled_dot_product(L, Q, K, V, mask=m, tag=name, empty_rows=empty_rows)
             for name, m in conventions.items()}
    out = evaluate(L, "numpy", values={"Q": q, "K": k}, targets=[h.A.name for h in heads.values()])
    return {name: np.asarray(out[h.A.name], dtype=float) for name, h in heads.items()}


def test_the_three_conventions_match_torch_sdpa_with_a_bool_and_an_additive_mask(rng):
    """F.scaled_dot_product_attention takes a boolean attn_mask (True = take part: keep) or a float one added to the
    scores (additive); nn.MultiheadAttention's boolean mask is the complement (exclude). With V = I the output is A."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    T, S, d_k = 3, 5, 2  # pairwise distinct: a transposed mask cannot pass
    allowed = rng.random((T, S)) < 0.5
    allowed[np.arange(T), rng.integers(0, S, T)] = True  # every query reads at least one source
    q, k = rng.normal(size=(T, d_k)), rng.normal(size=(S, d_k))
    float_mask = torch.zeros(T, S, dtype=torch.float64).masked_fill(~torch.tensor(allowed), float("-inf"))
    ours = _weights(T, S, d_k, {"keep": Mask.keep(allowed), "exclude": Mask.exclude(~allowed),
                                "additive": Mask.additive(float_mask), "plain": allowed}, q, k)
    tq, tk, eye = torch.tensor(q), torch.tensor(k), torch.eye(S, dtype=torch.float64)
    by_bool = F.scaled_dot_product_attention(tq, tk, eye, attn_mask=torch.tensor(allowed)).numpy()
    by_float = F.scaled_dot_product_attention(tq, tk, eye, attn_mask=float_mask).numpy()
    np.testing.assert_allclose(by_bool, by_float, rtol=0, atol=1e-15)
    for name, A in ours.items():
        np.testing.assert_allclose(A, by_bool, rtol=0, atol=1e-14, err_msg=name)
        assert (A[~allowed] == 0).all() and (by_bool[~allowed] == 0).all()
        np.testing.assert_array_equal(A, ours["keep"])


@st.composite
def visibilities(draw):
    T, S = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    allowed = np.array(draw(st.lists(st.lists(st.booleans(), min_size=S, max_size=S), min_size=T, max_size=T)))
    entries = np.array(draw(st.lists(st.floats(-4, 4, allow_nan=False), min_size=2 * (T + S), max_size=2 * (T + S))))
    return allowed, entries[:2 * T].reshape(T, 2), entries[2 * T:].reshape(S, 2)


@settings(max_examples=200, deadline=None)
@given(visibilities())
def test_keep_exclude_and_additive_give_identical_weights_and_zero_for_every_masked_source(case):
    allowed, q, k = case
    (T, S), d_k = allowed.shape, 2
    W = _weights(T, S, d_k, {"keep": Mask.keep(allowed), "exclude": Mask.exclude(~allowed),
                             "additive": Mask.additive(np.where(allowed, 0.0, -np.inf))}, q, k, empty_rows="zero")
    np.testing.assert_array_equal(W["keep"], W["exclude"])
    np.testing.assert_array_equal(W["keep"], W["additive"])
    A = W["keep"]
    assert (A[~allowed] == 0.0).all()  # exactly zero, not tiny
    full = allowed.any(axis=1)
    np.testing.assert_allclose(A[full].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (A[~full] == 0.0).all()  # empty_rows="zero": a row with no source is a zero row


def test_a_heatmap_reads_its_mask_with_the_same_check():
    """A heatmap's allowed mask was cast with np.asarray(dtype=bool): an additive 0/−∞ mask hatched the allowed
    entries and left the masked ones plain."""
    from symseq import Derivation, Section

    s = Section(Derivation("heatmap-masks", title="masks of a heatmap", source="t.txt"), "§1")
    A = sp.Matrix([[1, 0], [sp.Rational(1, 2), sp.Rational(1, 2)]])
    spec = s.heatmap("h", A, allowed=Mask.additive([[0, -np.inf], [0, 0]]))
    np.testing.assert_array_equal(spec.allowed, [[True, False], [True, True]])
    with pytest.raises(MaskError, match=r"§1: heatmap h2 mask: entry \(row 0, column 1\) is -inf"):
        s.heatmap("h2", A, allowed=[[0, -np.inf], [0, 0]])
    with pytest.raises(ShapeError, match="has shape 3×3 but the scores are 2×2"):
        s.heatmap("h3", A, allowed=masks.causal(3))


def test_a_masked_score_plus_a_real_entry_is_minus_infinity_without_a_search_for_its_sign(monkeypatch):
    # SymPy's sum drops a real term beside −∞, but first asks whether it is ≤ 0: a sign search through the
    # assumptions system, most of evaluating a causal attention over symbolic scores
    import sys

    import numpy as np
    import sympy as sp

    from symseq.arrays import EXACT

    q, k, z = sp.symbols("q_mask_test k_mask_test z_mask_test", real=True)
    c = sp.Symbol("c_mask_test")  # no assumption: −∞ + c stays a sum, as SymPy makes it
    scores = np.array([[q * k + q, q - k], [q * k, c]], dtype=object)
    mask = np.array([[0, -sp.oo], [-sp.oo, -sp.oo]], dtype=object)
    assumptions = sys.modules["sympy.core.assumptions"]
    asked, ask = [], assumptions._ask
    monkeypatch.setattr(assumptions, "_ask", lambda fact, obj: asked.append((fact, obj)) or ask(fact, obj))
    out = EXACT.add(scores, mask)
    assert out.tolist() == [[q * k + q, -sp.oo], [-sp.oo, c - sp.oo]]
    assert {obj for fact, obj in asked if fact == "extended_nonpositive"} <= {c}  # only the unknown c is asked
    assert EXACT.add(-sp.oo, z * k) == -sp.oo and EXACT.add(z, 2) == z + 2


def test_a_masked_weight_times_a_value_is_zero_without_asking_whether_the_value_is_finite(monkeypatch):
    # SymPy's 0 · v is 0 unless it proves v infinite, which it first asks through the assumptions system: most of
    # multiplying a masked attention matrix (exact zeros) by symbolic values
    import sys

    import numpy as np
    import sympy as sp

    from symseq.arrays import EXACT

    x, y = sp.symbols("x_zero_test y_zero_test", real=True)
    big = sp.exp(x) / (sp.exp(x) + sp.exp(y))
    forever = sp.Symbol("forever_zero_test", infinite=True)
    V = np.array([[big], [x * big + y]], dtype=object)
    assumptions = sys.modules["sympy.core.assumptions"]
    asked, ask = [], assumptions._ask
    monkeypatch.setattr(assumptions, "_ask", lambda fact, obj: asked.append((fact, obj)) or ask(fact, obj))
    assert EXACT.matmul(np.array([[0, 0]], dtype=object), V).tolist() == [[0]]
    assert not [obj for fact, obj in asked if fact == "finite" and obj.has(sp.exp)]
    assert EXACT.matmul(np.array([[1, 0], [big, 1 - big]], dtype=object), V).tolist() == \
        [[big], [big * big + (1 - big) * (x * big + y)]]
    # what SymPy gives where a factor may be infinite: nan for a proved one, 0 · (−∞) as well
    assert EXACT.mul(sp.S.Zero, forever) is sp.nan and EXACT.mul(sp.S.Zero, x - sp.oo) is sp.nan
    assert EXACT.mul(np.array([[0, x]], dtype=object), np.array([[big, 2]], dtype=object)).tolist() == [[0, 2 * x]]


def test_whether_zero_absorbs_a_value_is_remembered_per_subexpression_and_answers_as_the_whole_tree_would():
    # 0 · v is 0 when v holds no ∞ or nan and only finite free symbols; the answer is kept per subexpression (the
    # value entries share their subtrees), and a node with its own free symbols (a Lambda, Subs, Derivative) is
    # asked as a whole, so a bound symbol that is not finite does not count
    import sympy as sp

    from symseq import arrays

    x, y = sp.symbols("x_absorb_test y_absorb_test", real=True)
    u = sp.Symbol("u_absorb_test")  # finite unknown
    f = sp.Function("f_absorb_test")
    cases = [
        sp.exp(x) / (sp.exp(x) + sp.exp(y)), x * sp.tanh(y) + 3, u + x, sp.Lambda(u, u + x)(y), x - sp.oo,
        sp.Subs(f(u).diff(u), u, x), f(u).diff(u), sp.zoo * x + y, sp.Integral(u, (u, 0, x)), sp.sqrt(x) ** 3,
    ]
    for e in cases:
        assert arrays._zero_absorbs(e) == (not e.has(*arrays._INFINITE)
                                           and all(s.is_finite for s in e.free_symbols)), e
    shared = sp.exp(x) + sp.exp(y)
    arrays._zero_absorbs(x / shared)
    assert arrays._ABSORBED[shared] is True


def test_a_score_read_as_real_from_its_sums_products_and_powers_is_one_sympy_calls_real(monkeypatch):
    # −∞ + s is −∞ for a real score s; that s is real is read off its sums, products and powers, and only what
    # SymPy alone can answer (a function of a symbol, a symbol) is asked of it. A True is never one SymPy denies.
    import random
    import sys

    import sympy as sp

    from symseq import arrays
    from symseq.arrays import EXACT

    q, k = sp.symbols("q_real_test k_real_test", real=True)
    p, u = sp.Symbol("p_real_test", positive=True), sp.Symbol("u_real_test")
    score = sp.sqrt(2) * (q * k + 2 * q) ** 2 / 4 - sp.Rational(1, 3) * k * sp.tanh(q)
    assumptions = sys.modules["sympy.core.assumptions"]
    asked, ask = [], assumptions._ask
    monkeypatch.setattr(assumptions, "_ask", lambda fact, obj: asked.append((fact, obj)) or ask(fact, obj))
    assert EXACT.add(score, -sp.oo) == -sp.oo
    assert not [obj for _, obj in asked if isinstance(obj, (sp.Add, sp.Mul, sp.Pow))]
    monkeypatch.undo()
    rnd = random.Random(5)
    atoms = [q, k, p, u, sp.Integer(0), sp.Rational(-3, 7), sp.sqrt(2), sp.I, sp.pi, sp.oo]

    def made(depth):
        if depth == 0 or rnd.random() < 0.25:
            return rnd.choice(atoms)
        kind = rnd.random()
        if kind < 0.6:
            parts = [made(depth - 1) for _ in range(rnd.randint(2, 3))]
            return sp.Add(*parts) if kind < 0.3 else sp.Mul(*parts)
        if kind < 0.85:
            return made(depth - 1) ** rnd.choice([2, -1, 0, sp.Rational(1, 2), 3, sp.Rational(-1, 3)])
        return rnd.choice([sp.tanh, sp.exp, sp.log])(made(depth - 1))

    for _ in range(300):
        e = made(4)
        if isinstance(e, sp.Expr) and arrays._surely_real(e):
            assert e.is_real is True, e
