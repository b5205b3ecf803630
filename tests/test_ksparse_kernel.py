"""The compiled secular-equation kernel against a NumPy transcription of the
same iteration (bit for bit) and against eigvalsh of the bordered matrices."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spca import _ksparse, _ksparse_fast


def bordered_top_numpy(mu, W2, c):
    """The safeguarded Newton iteration of ``_ksparse.bordered_top``, in NumPy
    (the package's implementation before the kernel)."""
    if mu.size == 0:
        return c.astype(np.float64, copy=True)
    top = float(mu.max())
    nb2 = W2.sum(axis=0)
    lo = np.maximum(top, c)
    hi = 0.5 * (top + c + np.sqrt((top - c) ** 2 + 4.0 * nb2))
    hi = np.maximum(hi, lo)
    x = hi.copy()
    scale = max(abs(top), float(np.max(np.abs(hi))), np.finfo(float).tiny)
    mu_col = mu[:, None]
    for _ in range(_ksparse.SECULAR_ITER):
        den = x - mu_col
        open_ = x > lo
        den = np.where(den > 0, den, np.inf)
        t = W2 / den
        f = x - c - t.sum(axis=0)
        fp = 1.0 + (t / den).sum(axis=0)
        pos = f >= 0
        hi = np.where(pos, x, hi)
        lo = np.where(pos | ~open_, lo, x)
        newton = x - f / fp
        inside = (newton >= lo) & (newton <= hi)
        x_new = np.where(inside, newton, 0.5 * (lo + hi))
        step = np.abs(x_new - x)
        x = x_new
        if float(np.max(step, initial=0.0)) <= _ksparse.SECULAR_RTOL * scale:
            break
    return np.maximum(x, lo)


def bordered_problem(rng, s, m, scale=1.0, degenerate=False):
    """Eigenvalues of a random PSD block, the squared couplings of m borders in
    its eigenbasis, and the corners; the dense bordered matrices too."""
    A = rng.standard_normal((s, s + 2))
    A = scale * (A @ A.T) / (s + 2)
    B = scale * rng.standard_normal((s, m)) / np.sqrt(s)
    if degenerate:
        B[:, : m // 2] = 0.0  # borders orthogonal to the block
    c = scale * rng.uniform(0.0, 2.0, m)
    mu, U = np.linalg.eigh(A)
    W = U.T @ B
    return mu, W * W, c, A, B


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 40), m=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       log_scale=st.floats(-200, 150), degenerate=st.booleans())
def test_kernel_equals_the_numpy_iteration_bit_for_bit(s, m, seed, log_scale, degenerate):
    rng = np.random.default_rng(seed)
    mu, W2, c, _, _ = bordered_problem(rng, s, m, 10.0**log_scale, degenerate)
    args = (mu.copy(), W2.copy(), c.copy())
    ours = _ksparse.bordered_top(*args)
    ref = bordered_top_numpy(mu, W2, c)
    np.testing.assert_array_equal(ours, ref)
    # nothing the caller passed is modified
    np.testing.assert_array_equal(args[0], mu)
    np.testing.assert_array_equal(args[1], W2)
    np.testing.assert_array_equal(args[2], c)


@pytest.mark.parametrize("seed", range(5))
def test_roots_are_the_largest_eigenvalues_of_the_bordered_matrices(seed):
    rng = np.random.default_rng(seed)
    s, m = 12, 9
    mu, W2, c, A, B = bordered_problem(rng, s, m)
    vals = _ksparse.bordered_top(mu, W2, c)
    for j in range(m):
        M = np.block([[A, B[:, [j]]], [B[:, [j]].T, np.array([[c[j]]])]])
        assert vals[j] == pytest.approx(np.linalg.eigvalsh(M)[-1], rel=1e-11, abs=1e-13)


def test_kernel_refuses_mismatched_shapes():
    x = np.zeros(3)
    with pytest.raises(ValueError, match="shapes do not match"):
        _ksparse_fast.secular_roots(np.zeros(2), np.zeros((3, 3)), np.zeros(3), x, x.copy(),
                                    x.copy(), max_iter=5, threshold=0.0)


# -- top_k and the truncated power method ----------------------------------------------


def _top_k_by_sort(a, k):
    return np.sort(np.argsort(-a, kind="stable")[:k])


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_top_k_is_the_stable_sort_selection(data):
    """The partition's selection is the stable sort's, ties (many equal
    values, zeros, signed zeros), NaN and k at the ends included."""
    m = data.draw(st.integers(0, 40))
    pool = data.draw(st.sampled_from(["floats", "few values", "nan"]))
    if pool == "floats":
        a = np.array(data.draw(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=m,
                                        max_size=m)), dtype=float)
    else:
        values = [0.0, -0.0, 1.0, 2.5] + ([np.nan] if pool == "nan" else [])
        a = np.array(data.draw(st.lists(st.sampled_from(values), min_size=m, max_size=m)),
                     dtype=float)
    k = data.draw(st.integers(0, m + 2))
    got = _ksparse.top_k(a, k)
    np.testing.assert_array_equal(got, _top_k_by_sort(a, k))
    assert got.dtype == np.intp


@given(st.integers(2, 30), st.integers(1, 8), st.integers(0, 2**32 - 1),
       st.sampled_from(["gaussian", "ties", "zero rows"]))
@settings(max_examples=80, deadline=None)
def test_truncated_power_same_support_as_with_sorts(m, k, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "ties":
        # equicorrelated: many equal entries of B x
        B = 0.5 * np.ones((m, m)) + 0.5 * np.eye(m)
    else:
        A = rng.standard_normal((m, m + 3))
        B = A @ A.T
        if kind == "zero rows":
            B[: m // 2] = 0.0
            B[:, : m // 2] = 0.0
    pool = _ksparse._Pool(B)
    if not pool.usable.any():
        return
    for x0 in (np.eye(m)[int(np.argmax(pool.d))], rng.standard_normal(m)):
        # (the reference: the same iteration with the full stable sorts)
        with mock.patch.object(_ksparse, "top_k", _top_k_by_sort):
            ref = pool.truncated_power(x0, k)
        np.testing.assert_array_equal(pool.truncated_power(x0, k), ref)


def _swaps_by_eigensolves(B, S):
    """Best-improvement swaps, every exchange scored by a dense eigensolve."""
    S = np.sort(S)
    cur = np.linalg.eigvalsh(B[np.ix_(S, S)])[-1]
    n_swaps = 0
    while True:
        outside = np.setdiff1d(np.arange(B.shape[0]), S)
        best, T_best = cur * (1.0 + _ksparse.SWAP_RTOL), None
        for i in range(S.size):
            for j in outside:
                T = np.sort(np.append(np.delete(S, i), j))
                val = np.linalg.eigvalsh(B[np.ix_(T, T)])[-1]
                if val > best:
                    best, T_best = val, T
        if T_best is None:
            return S, cur, n_swaps
        S, cur, n_swaps = T_best, best, n_swaps + 1


@given(st.integers(4, 14), st.integers(2, 4), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_swaps_reach_the_swap_optimum_of_dense_eigensolves(m, k, seed):
    """The swap search (blocks without row i by takes, candidates screened
    by bounds, scored by the secular equation) takes the same swaps as
    scoring every exchange by a dense eigensolve."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, m + 2))
    B = A @ A.T
    S0 = np.sort(rng.choice(m, size=k, replace=False))
    mv = _ksparse._Pool(B).swaps(S0)
    S, val, n = _swaps_by_eigensolves(B, S0)
    np.testing.assert_array_equal(mv.support, S)
    assert mv.swaps == n
    assert mv.variance == pytest.approx(val, rel=1e-12)


@given(st.integers(0, 60), st.integers(1, 6), st.integers(0, 2**32 - 1),
       st.floats(-30, 30))
@settings(max_examples=100, deadline=None)
def test_pair_bounds_kernel_equals_the_numpy_formulas_bit_for_bit(m, s, seed, log_scale):
    rng = np.random.default_rng(seed)
    scale = 2.0**log_scale
    X = scale * rng.standard_normal((s, m))
    u = rng.standard_normal(s)
    u /= np.linalg.norm(u)
    c = scale * rng.random(m)
    top = float(scale * (1.0 + rng.random()))
    lower, upper = _ksparse._pair_bounds(top, u, X, c)
    w = u @ X
    nb2 = np.einsum("ij,ij->j", X, X)
    np.testing.assert_array_equal(
        lower, 0.5 * (top + c + np.sqrt((top - c) ** 2 + 4.0 * w * w)))
    np.testing.assert_array_equal(upper, 0.5 * (top + c + np.sqrt((top - c) ** 2 + 4.0 * nb2)))
    # and they bracket the largest eigenvalue of each bordered matrix
    A = X @ X.T / max(m, 1) + top * np.outer(u, u)
    for j in range(min(m, 5)):
        M = np.block([[A, X[:, j:j + 1]], [X[:, j:j + 1].T, c[j:j + 1, None]]])
        val = np.linalg.eigvalsh(M)[-1]
        top_a, u_a = _ksparse.top_eig(A)
        lo, up = _ksparse._pair_bounds(top_a, u_a, X[:, j:j + 1], c[j:j + 1])
        assert lo[0] <= val * (1 + 1e-10) + 1e-300 and val <= up[0] * (1 + 1e-10) + 1e-300


def test_pair_bounds_kernel_refuses_mismatched_shapes():
    z = np.zeros(3)
    with pytest.raises(ValueError, match="shapes do not match"):
        _ksparse_fast.pair_bounds(1.0, z, z, np.zeros(4), np.zeros(4), np.zeros(4))


def _best_addition_numpy(B, R, C, floor):
    """_Pool._best_addition's scoring as it was written with NumPy."""
    c = np.diag(B)[C]
    mu, U = np.linalg.eigh(B[np.ix_(R, R)])
    X = B[np.ix_(R, C)]
    lower, bound = _ksparse._pair_bounds(float(mu[-1]), U[:, -1], X, c)
    floor = max(floor, float(lower.max()) * (1.0 - 1e-12))
    keep = (bound > floor).nonzero()[0]
    if keep.size == 0:
        return -1, floor
    W = U.T @ X[:, keep]
    vals = _ksparse.bordered_top(mu, W * W, c[keep])
    j = int(np.argmax(vals))
    if vals[j] > floor:
        return int(C[keep[j]]), float(vals[j])
    return -1, floor


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 40), r=st.integers(1, 8),
       floor=st.sampled_from([-np.inf, 0.0, 0.5, 2.0, 50.0]))
def test_best_addition_kernel_matches_numpy(seed, n, r, floor):
    """The compiled scoring picks the NumPy path's candidate with its value
    (to rounding: its sums run in index order), and the same floor."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n + 3, n)) * rng.uniform(0.1, 3.0, n)
    B = F.T @ F / (n + 3)
    r = min(r, n - 1)
    perm = rng.permutation(n)
    R, C = np.sort(perm[:r]), np.sort(perm[r:])
    ref_j, ref_val = _best_addition_numpy(B, R, C, floor)
    j, val = _ksparse._Pool(B)._best_addition(R, C, floor)
    scale = float(np.abs(B).max())
    if ref_j < 0 or j < 0:
        assert j == ref_j
    else:
        # a different candidate only within rounding of the best value
        assert j == ref_j or abs(val - ref_val) <= 1e-12 * scale
    assert val == pytest.approx(ref_val, rel=1e-12, abs=1e-13 * scale)


def test_best_addition_kernel_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"mu \(2,\), U \(2, 2\), X \(3, 4\)"):
        _ksparse_fast.best_addition(np.zeros(2), np.eye(2), np.zeros((3, 4)), np.zeros(4),
                                    0.0, 60, 1e-13)
    with pytest.raises(ValueError, match="needs a support and a candidate"):
        _ksparse_fast.best_addition(np.zeros(2), np.eye(2), np.zeros((2, 0)), np.zeros(0),
                                    0.0, 60, 1e-13)
