"""Attention properties proved on the ledger, each shown to catch a deliberately broken copy of the block.

Properties (Handout #11, 001, §2.1, §3.2, §6.1, §7.3; Week 7, 003): masked rows
sum to one; outputs are convex combinations of values; a constant added to a
score row changes nothing; unrestricted attention is permutation equivariant
and positions break it; a causal mask in every layer makes ∂o_i/∂x_j exactly 0
for j > i, and masking only the last block leaks. The hypothesis tests sample
shapes and values; the proofs themselves are symbolic.
"""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symseq import Ledger, blocks, evaluate, ops
from symseq.derive import properties as pr
from symseq.derive.symbolic import vanishes

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# builders: a correct block and broken copies of it
# ---------------------------------------------------------------------------


def head(L, X, *, tag="", mask=None, d_k=1, transpose_weights=False, mask_fn=None):
    """One symbolic head on X (T×D); the keyword arguments break it on purpose."""
    T, D = X.shape
    p = lambda n, w: L.parameter(f"{n}{tag}", shape=(D, w))  # noqa: E731
    Q = L.define(f"Q{tag}", X @ p("W_Q", d_k))
    K = L.define(f"K{tag}", X @ p("W_K", d_k))
    V = L.define(f"V{tag}", X @ p("W_V", D))
    S = L.define(f"S{tag}", Q @ K.T)
    allowed = None
    if mask == "causal":
        allowed = blocks.masks.causal(T)
        if mask_fn is not None:
            allowed = mask_fn(allowed)
    A = L.define(f"A{tag}", ops.SoftmaxRows(S, allowed, empty_rows="zero"))
    O = L.define(f"O{tag}", (A.T if transpose_weights else A) @ V)
    return L.define(f"H{tag}", X + O)


def stack(masks, **broken):
    def build(L, X):
        H = X
        for i, m in enumerate(masks):
            H = head(L, H, tag=f"^{{({i})}}", mask="causal" if m else None, **(broken if m else {}))
        return H
    return build


# ---------------------------------------------------------------------------
# rows sum to one, convex combinations, shifts
# ---------------------------------------------------------------------------


def attention_ledger(T, S, d_v, allowed, transpose=False):
    L = Ledger()
    Sc = L.input("S", shape=(T, S))
    V = L.input("V", shape=(S, d_v))
    A = L.define("A", ops.SoftmaxRows(Sc, allowed))
    W = L.define("W", A.T) if transpose else A
    O = L.define("O", W @ V)
    return L, W, O, V


def test_rows_sum_to_one_and_a_transposed_matrix_is_caught():
    allowed = blocks.masks.causal(3)
    L, A, O, V = attention_ledger(3, 3, 2, allowed)
    assert pr.rows_sum_to_one(L, A)
    L2, At, O2, V2 = attention_ledger(3, 3, 2, allowed, transpose=True)
    bad = pr.rows_sum_to_one(L2, At)
    assert not bad and bad.witness["row"] == 0  # row 0 of Aᵀ is column 0 of A


def test_outputs_are_convex_combinations_and_a_transposed_product_is_caught():
    L, A, O, V = attention_ledger(2, 3, 2, np.array([[1, 1, 0], [1, 1, 1]], dtype=bool))
    assert pr.convex_combination(L, O, V)
    Lb = Ledger()
    S = Lb.input("S", shape=(3, 3))
    Vb = Lb.input("V", shape=(3, 2))
    Ab = Lb.define("A", ops.SoftmaxRows(S, blocks.masks.causal(3)))
    Ob = Lb.define("O", Ab.T @ Vb)
    assert not pr.convex_combination(Lb, Ob, Vb)
    # a value scaled by 2 is not a convex combination either
    Lc = Ledger()
    Sc, Vc = Lc.input("S", shape=(2, 2)), Lc.input("V", shape=(2, 1))
    Oc = Lc.define("O", ops.SoftmaxRows(Sc) @ Vc * 2)
    assert not pr.convex_combination(Lc, Oc, Vc)


def test_shift_invariance():
    assert pr.shift_invariance(2, 3)
    assert pr.shift_invariance(3, 3, blocks.masks.causal(3))


# ---------------------------------------------------------------------------
# permutation equivariance
# ---------------------------------------------------------------------------


def test_unrestricted_attention_is_permutation_equivariant_and_positions_break_it():
    one = lambda L, X: blocks.attention_head(  # noqa: E731
        L, X, L.parameter("W_Q", shape=(2, 2)), L.parameter("W_K", shape=(2, 2)), L.parameter("W_V", shape=(2, 2)),
        orientation="in_out")
    assert pr.permutation_equivariance(lambda L, X: one(L, X).A, 3, 2, [2, 1, 0], kind="pairs")
    assert pr.permutation_equivariance(lambda L, X: one(L, X).O, 3, 2, [1, 2, 0])

    def with_positions(L, X):
        P = L.input("P", [[0, 0], [0, "1/2"], ["1/2", "1/2"]])
        return one(L, L.define("X+P", X + P)).O

    broken = pr.permutation_equivariance(with_positions, 3, 2, [2, 1, 0])
    assert not broken and broken.witness["value"] != 0
    causal = lambda L, X: head(L, X, mask="causal")  # noqa: E731
    assert not pr.permutation_equivariance(causal, 3, 2, [2, 1, 0])


def test_a_whole_encoder_block_with_layer_norm_and_ffn_is_equivariant():
    def block(L, X):
        p = blocks.BlockParams([(L.parameter("W_Q", [[1], [-2]]), L.parameter("W_K", [["1/2"], [1]]),
                                 L.parameter("W_V", [[1, 2], [0, -1]]))], L.parameter("W_O", [[1, "1/3"], [2, 1]]),
                               (L.parameter("W_1", [[1, -1, 2], ["1/2", 1, -1]]), None,
                                L.parameter("W_2", [[1, 0], [-1, 2], ["1/4", 1]]), None))
        return blocks.transformer_block(L, X, p, orientation="in_out", tag="(0)", eps="1/10", mask=None).out

    assert pr.permutation_equivariance(block, 3, 2, [2, 0, 1])


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(4)), st.integers(2, 3))
def test_moving_entries_is_multiplying_by_the_permutation_matrix(perm, cols):
    """Π M and Π M Πᵀ, taken by moving entries (no products of closed forms with 0 and 1), are the products."""
    P = pr.permutation_matrix(perm)
    M = sp.Matrix(4, cols, lambda i, j: sp.Symbol(f"m_{i}{j}") + i * j)
    assert pr._permuted(M, perm, "rows") == P * M
    S = sp.Matrix(4, 4, lambda i, j: sp.exp(sp.Symbol(f"s_{i}{j}")))
    assert pr._permuted(S, perm, "pairs") == P * S * P.T


def test_permutation_errors():
    with pytest.raises(Exception, match="not a permutation"):
        pr.permutation_matrix([0, 0, 1])
    with pytest.raises(Exception, match="kind must be"):
        pr.permutation_equivariance(lambda L, X: X, 2, 1, [1, 0], kind="cols")


# ---------------------------------------------------------------------------
# causal independence and leakage
# ---------------------------------------------------------------------------


def test_causal_mask_in_every_layer_gives_exact_zeros():
    p = pr.causal_independence(stack([True, True]), 3, 2)
    assert p, p.detail
    assert p.value.pattern() == "• 0 0\n• • 0\n• • •"


def test_masking_only_the_last_block_leaks_and_shows_the_entry():
    p = pr.leakage(stack([False, True]), 3, 2)
    assert p
    i, c, j, e = p.witness["entry"]
    assert j > i and p.witness["value"] != 0
    assert not pr.causal_independence(stack([False, True]), 3, 2)


def test_every_witness_of_a_dependence_is_the_ledgers_value_at_its_point():
    # each position's point evaluation reuses the rows that do not depend on the upstream weights g: the
    # values are those symseq.evaluate gives at the point with g one-hot
    dep = pr.dependence(stack([False, True]), 3, 2)
    assert dep.witness
    for (i, j), (c, e, value, point) in dep.witness.items():
        L = Ledger("the same stack")
        X = L.input("X", shape=(3, 2))
        out = stack([False, True])(L, X)
        g = L.input("g", shape=(1, out.shape[1]))
        L.define("ℓ", ops.Sum(out[i, :] * g, None))
        name = L.backward("ℓ", wrt=["X"]).name("X")
        one_hot = sp.Matrix(1, out.shape[1], lambda _, k: 1 if k == c else 0)
        got = evaluate(L, "mpmath", dps=30, values={**point, "g": one_hot}, targets=[name])[name]
        assert got[j, e] == value


def test_a_transposed_mask_in_a_copy_of_the_block_is_caught():
    """The same stack with the mask transposed (upper triangle allowed) reads the future: the check fails."""
    broken = stack([True, True], mask_fn=lambda allowed: allowed.T)
    p = pr.causal_independence(broken, 3, 2)
    assert not p and p.witness["pairs"]
    assert p.value.pattern() == "• • •\n0 • •\n0 0 •"


def test_transposed_weights_in_a_copy_of_the_block_are_caught():
    """O = Aᵀ V instead of A V: the first output reads every position."""
    p = pr.causal_independence(stack([True], transpose_weights=True), 3, 2)
    assert not p and (0, 2) in p.witness["pairs"]


# ---------------------------------------------------------------------------
# hypothesis: random shapes and values
# ---------------------------------------------------------------------------


@st.composite
def masked_scores(draw):
    T = draw(st.integers(1, 4))
    S = draw(st.integers(1, 4))
    allowed = np.array(draw(st.lists(st.lists(st.booleans(), min_size=S, max_size=S), min_size=T, max_size=T)),
                       dtype=bool).reshape(T, S)
    for t in range(T):
        if not allowed[t].any():
            allowed[t, draw(st.integers(0, S - 1))] = True
    num = st.integers(-6, 6)
    scores = [[sp.Rational(draw(num), draw(st.integers(1, 3))) for _ in range(S)] for _ in range(T)]
    d_v = draw(st.integers(1, 3))
    values = [[sp.Rational(draw(num), 2) for _ in range(d_v)] for _ in range(S)]
    shift = [sp.Rational(draw(num), draw(st.integers(1, 4))) for _ in range(T)]
    return allowed, scores, values, shift


@SETTINGS
@given(masked_scores())
def test_rows_sum_to_one_and_convexity_at_random_exact_points(case):
    allowed, scores, values, shift = case
    T, S = allowed.shape
    L = Ledger()
    Sc = L.input("S", scores)
    V = L.input("V", values)
    c = L.input("c", [[s] for s in shift])
    A = L.define("A", ops.SoftmaxRows(Sc, allowed))
    L.define("A_shift", ops.SoftmaxRows(Sc + c, allowed))
    L.define("O", A @ V)
    assert pr.rows_sum_to_one(L, A)
    Av = L.value("A")
    assert all((Av[t, j] == 0) == (not allowed[t, j]) for t in range(T) for j in range(S))
    assert vanishes(L.value("A_shift") - Av)
    Ov = evaluate(L, "mpmath", dps=30)["O"]
    Vm = np.array(values, dtype=object)
    with mpmath.workdps(40):  # the tolerance must survive being added to 1.5: work at 40 digits, not 15
        tol = mpmath.mpf("1e-25")
        for t in range(T):
            for k in range(Vm.shape[1]):
                col = [mpmath.mpf(int(x.p)) / int(x.q) for x in Vm[:, k]]
                assert min(col) - tol <= Ov[t, k] <= max(col) + tol  # inside the convex hull, per coordinate


@SETTINGS
@given(st.integers(2, 4), st.integers(1, 3), st.randoms(use_true_random=False))
def test_permutation_equivariance_at_random_shapes(T, D, rnd):
    perm = list(range(T))
    rnd.shuffle(perm)
    build = lambda L, X: blocks.attention_head(  # noqa: E731
        L, X, L.parameter("W_Q", shape=(D, 1)), L.parameter("W_K", shape=(D, 1)), L.parameter("W_V", shape=(D, D)),
        orientation="in_out").A
    assert pr.permutation_equivariance(build, T, D, perm, kind="pairs")


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.integers(1, 2))
def test_causal_independence_at_random_shapes(T, D):
    dep = pr.dependence(stack([True, True]), T, D)
    assert dep.future() == []
    assert all(not dep.zero[i][j] for i in range(T) for j in range(i + 1))  # the past is read
    leak = pr.dependence(stack([False, True]), T, D)
    assert leak.future()


def test_agree_reports_the_largest_difference():
    import mpmath

    from symseq.derive.properties import agree

    with mpmath.workdps(50):
        a = [[mpmath.mpf(1) / 3, mpmath.mpf(2)]]
        b = [[mpmath.mpf(1) / 3 + mpmath.mpf(10) ** -45, mpmath.mpf(2)]]
        assert agree(a, b) == (True, "largest difference 1e-45")
        assert agree(a, [[mpmath.mpf("0.3333"), 2]])[0] is False
    assert agree([[1, 2]], [[1], [2]]) == (False, "shapes (1, 2) and (2, 1)")


def test_the_dot_product_variance_is_remembered_per_argument_and_still_refuses_floats():
    from symseq import ConventionError
    from symseq.derive.moments import dot_product_variance

    sigma = sp.Symbol("σ_moments_test", positive=True)
    assert dot_product_variance(3) == 3 and dot_product_variance(3, scaled=True) == 1
    assert dot_product_variance(2, sigma2=sigma ** 2) == 2 * sigma ** 4
    assert dot_product_variance(2, sigma2=sigma ** 2) is dot_product_variance(2, sigma2=sigma ** 2)
    assert dot_product_variance(2, sigma2=2) == 8  # 2 (an int) is not the 2 of sigma2=2.0, which is refused
    with pytest.raises(ConventionError):
        dot_product_variance(2, sigma2=2.0)
