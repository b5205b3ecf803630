"""The cheap node descents of the branch and bound (``spca.cardinality``):
the Cholesky certificate never proves a value below the true largest
eigenvalue (exact spectra, near-degenerate ones included), the compiled
row-norm rows equal the NumPy penalty, a descent closes a node only when
brute force says that it may, and every "optimal" claim with descents at
every node equals brute force."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exact import brute_force, check_proven, random_covariance, random_node

from spca.cardinality import _bounds, _search

EPS = float(np.finfo(float).eps)


def exact_spectrum_matrix(rng, blocks, scale):
    """A symmetric matrix whose largest eigenvalue is known exactly (a
    ``Fraction``): blocks ``d I + b (J - I)`` (power-of-two sizes, every
    entry a float, so the stored matrix is the one meant; eigenvalues
    ``d - b + n b`` and ``d - b``), times a power of two, under a random
    permutation and signs (exact similarities)."""
    n = sum(size for size, _, _ in blocks)
    A = np.zeros((n, n))
    top = None
    at = 0
    for size, a, b in blocks:
        d, b = (a + b) * scale, b * scale  # (the floats stored)
        A[at:at + size, at:at + size] = b
        A[np.arange(at, at + size), np.arange(at, at + size)] = d
        vals = [Fraction(d) - Fraction(b) + size * Fraction(b)]
        if size > 1:
            vals.append(Fraction(d) - Fraction(b))
        top = max(vals) if top is None else max(top, *vals)
        at += size
    perm = rng.permutation(n)
    signs = rng.choice([-1.0, 1.0], size=n)
    return A[np.ix_(perm, perm)] * np.outer(signs, signs), top


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_cholesky_certificate_never_below_the_top_eigenvalue(seed, data):
    """On matrices whose largest eigenvalue is exact (clusters split by one
    ulp-sized ``b`` included), ``certify_below`` never proves a target below
    it, and it does prove one a little above it."""
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(data.draw(st.integers(1, 4))):
        size = 2 ** data.draw(st.integers(0, 6))
        a = data.draw(st.integers(-64, 64)) / 8.0
        b = data.draw(st.sampled_from([0.0, 2.0**-52, -(2.0**-52), 2.0**-40, 2.0**-20,
                                       0.125, -0.125, 1.0]))
        blocks.append((size, a, b))
    scale = 2.0 ** data.draw(st.integers(-30, 30))
    A, top = exact_spectrum_matrix(rng, blocks, scale)
    for rel in (0.0, 2 * EPS, 1e-14, 1e-10, 1e-6):
        t = float(top) - rel * max(abs(float(top)), scale)
        while Fraction(t) >= top:  # strictly below the exact eigenvalue
            t = float(np.nextafter(t, -math.inf))
        assert not _bounds.certify_below(A, t), rel
    # a target comfortably above is proven (the margin is small)
    spread = float(np.abs(A).sum(axis=1).max()) + abs(float(top)) + scale
    assert _bounds.certify_below(A, float(top) + 1e-8 * spread)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40),
       cluster=st.sampled_from([0.0, 1e-15, 1e-12, 1e-8, 1e-3]))
def test_cholesky_certificate_against_eigvalsh(seed, n, cluster):
    """Random symmetric matrices with their top eigenvalues clustered (down
    to one rounding apart): whenever a target is proven, eigvalsh's largest
    eigenvalue (within its own error) is at most the target; the matrix is
    not modified."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = rng.uniform(-1.0, 1.0, size=n)
    lam[: min(3, n)] = 1.0 - cluster * np.arange(min(3, n))
    A = (Q * lam) @ Q.T
    A = (A + A.T) / 2
    before = A.copy()
    true = float(np.linalg.eigvalsh(A)[-1])
    err = 4 * n * EPS * float(np.linalg.norm(A))
    for t in true + np.array([-1e-3, -1e-8, -1e-12, -err, 0.0, err, 1e-12, 1e-8, 1e-3]):
        if _bounds.certify_below(A, float(t)):
            assert true <= t + err
    assert _bounds.certify_below(A, true + 1e-6)
    np.testing.assert_array_equal(A, before)


def _draw_multiplier(seed, n, data, ties):
    """A symmetric multiplier ``U`` (integer entries when ``ties``), the
    forced-in features and the number ``r`` of free features picked."""
    rng = np.random.default_rng(seed)
    U = rng.integers(-3, 4, size=(n, n)).astype(float) if ties else rng.standard_normal((n, n))
    U = (U + U.T) / 2
    inside = rng.random(n) < data.draw(st.sampled_from([0.0, 0.2, 0.5]))
    f = int((~inside).sum())
    r = data.draw(st.integers(0, max(f, 0)))
    return rng, U, inside, r


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), data=st.data(),
       ties=st.booleans())
def test_row_norm_rows_match_the_numpy_penalty(seed, n, data, ties):
    """The compiled rows give row_norm_penalty's number and a subgradient
    with the entries of row_norm_subgradient's rows (integer entries: ties)."""
    rng, U, inside, r = _draw_multiplier(seed, n, data, ties)
    pen, rows, cols = _bounds.row_norm_rows(U, inside, r)
    assert pen == pytest.approx(_bounds.row_norm_penalty(U, inside, r), rel=1e-12, abs=1e-300)
    assert _bounds.row_norm_value(U, inside, r) == pen
    ref_pen, G = _bounds.row_norm_subgradient(U, inside, r)
    assert pen == pytest.approx(ref_pen, rel=1e-12, abs=1e-300)
    mine = np.zeros_like(U)
    if pen > 0:
        np.add.at(mine, (rows, cols), U[rows, cols] / pen)
    # no entry twice; the same squared mass per row as the reference
    assert np.unique(rows * n + cols).size == rows.size
    np.testing.assert_allclose((mine ** 2).sum(axis=1), (G ** 2).sum(axis=1), rtol=1e-12,
                               atol=1e-300)
    if not ties:
        np.testing.assert_allclose(mine, G, rtol=1e-12, atol=0.0)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(4, 10), data=st.data(),
       raw=st.booleans())
def test_fast_descent_closes_only_valid_nodes(seed, p, data, raw):
    """A descent proves a node closed only when brute force puts the node's
    value at most at the level: the level drawn around that value (below it
    included), from any symmetric multiplier, at several scales."""
    Sigma = random_covariance(seed, p, raw)
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(2, p - 1))
    inside, N = random_node(rng, p, k)
    if N.size < k:
        return
    value, _ = brute_force(Sigma, k, inside, N)
    mask = np.isin(N, inside)
    r = k - inside.size
    c = data.draw(st.sampled_from([1e-8, 1.0, 1e8]))
    BN = c * Sigma[np.ix_(N, N)]
    U = rng.normal(0.0, float(rng.uniform(0.0, 0.5)) * float(np.diag(BN).max()), size=BN.shape)
    U = (U + U.T) / 2
    level = c * value * (1.0 + data.draw(st.sampled_from([-0.05, -1e-6, -1e-12, 0.0, 1e-3,
                                                          0.02, 0.2])))
    q = min(data.draw(st.integers(1, 4)), N.size)
    X0 = np.linalg.qr(rng.standard_normal((N.size, q)))[0]
    step = data.draw(st.sampled_from([1e-3, 0.1, 1.0])) * float(np.diag(BN).max())
    iters = data.draw(st.integers(0, 15))
    closed, est, U1, X, steps = _bounds.fast_node_descent(BN, U, mask, r, iters, step, level, X0)
    if closed:
        assert c * value <= level * (1 + 1e-12)
    assert np.allclose(U1, U1.T) and X.shape == (N.size, q) and 0 <= steps <= iters
    # the multiplier handed on still bounds (any symmetric U does)
    assert _bounds.row_norm_bound(BN, U1, mask, r)[0] >= c * value * (1 - 1e-12)


def test_fast_descent_closes_what_the_bound_allows():
    """A level above the row-norm bound at the starting multiplier closes
    the node at once (the certificate is not too loose to use)."""
    Sigma = random_covariance(11, 12, raw=True)
    N = np.arange(12)
    mask = np.zeros(12, dtype=bool)
    mask[[2, 5]] = True
    U = np.zeros((12, 12))
    val = float(np.linalg.eigvalsh(Sigma)[-1])  # + the penalty of U = 0
    X0 = np.linalg.eigh(Sigma)[1][:, -2:]
    closed, _, _, _, steps = _bounds.fast_node_descent(Sigma, U, mask, 3, 10, 0.1,
                                                       val * (1 + 1e-9), X0)
    assert closed and steps == 0
    closed, _, _, _, steps = _bounds.fast_node_descent(Sigma, U, mask, 3, 10, 0.1,
                                                       val * 0.5, X0)
    assert not closed and steps == 10
    # the give-up rule: every 4th step, while more than 1% above the level
    closed, est, _, _, steps = _bounds.fast_node_descent(Sigma, U, mask, 3, 10, 0.1,
                                                         val * 0.5, X0, check=4, hope=0.01)
    assert not closed and steps == 4 and est > val * 0.5 * 1.01
    assert N.size == 12


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("fast_iter", [1, 15])
def test_optimal_claims_with_fast_descents_everywhere(monkeypatch, seed, raw, fast_iter):
    """Fast descents at every node the parent's multiplier leaves open (no
    window, from the second node on): every "optimal" claim equals brute
    force."""
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "FAST_ITER", fast_iter)
    monkeypatch.setattr(_search, "FAST_WINDOW", math.inf)
    monkeypatch.setattr(_search, "DESC_KEEP", 0.0)
    p = 14
    Sigma = random_covariance(seed + 300, p, raw)
    for k in (3, 6, 9):
        check_proven(Sigma, k)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raw", [False, True])
def test_optimal_claims_with_vectors_handed_down(monkeypatch, seed, raw):
    """No node descends (the window is empty), so every child starts from
    its parent's Ritz or LAPACK vectors (certified by Cholesky or no bound),
    and Gershgorin and the coupling bound are dropped after the root's
    descent: every "optimal" claim still equals brute force."""
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "FAST_WINDOW", -1.0)
    monkeypatch.setattr(_search, "GERSH_TRIAL", 0)
    p = 14
    Sigma = random_covariance(seed + 500, p, raw)
    for k in (3, 6, 9):
        check_proven(Sigma, k)


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), data=st.data(),
       ties=st.booleans())
def test_row_norm_rows_with_a_hint_pick_the_same(seed, n, data, ties):
    """The kernel floored by the picks of an earlier multiplier (a descent's
    previous step: ``U`` moved a little, or a lot) picks the same columns
    and gives the same rows' sums (up to their order) as without it."""
    from spca.cardinality import _descent_fast

    rng, U, inside, r = _draw_multiplier(seed, n, data, ties)
    before = U + data.draw(st.sampled_from([0.0, 0.01, 1.0])) * rng.standard_normal((n, n))
    hint = _bounds._penalty_rows((before + before.T) / 2, inside, r)[3]
    mine = _bounds._penalty_rows(U, inside, r, hint)
    ref = _bounds._penalty_rows(U, inside, r)
    assert mine[0] == pytest.approx(ref[0], rel=1e-12, abs=1e-300)
    if r:
        U2 = U * U
        rows = np.arange(n)[:, None]
        # the same r largest squares of every row (the same columns, up to ties)
        np.testing.assert_allclose(np.sort(U2[rows, mine[3][:, :r]], axis=1),
                                   np.sort(U2[rows, ref[3][:, :r]], axis=1), rtol=0, atol=0)
        if not ties:
            assert np.array_equal(np.sort(mine[3][:, :r], axis=1),
                                  np.sort(ref[3][:, :r], axis=1))
    if (~inside).any():  # a hint that is not a free column is refused, not read
        bad = np.full((n, 1), n, dtype=np.intp)
        with pytest.raises(ValueError, match="not a free column"):
            _descent_fast.row_norm_rows(U, inside.view(np.uint8), 1, np.empty(n),
                                        np.empty((n, 1), dtype=np.intp), bad, True)
