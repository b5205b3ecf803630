"""The compiled kernels of spca._bca_fast and spca._certificate_fast against readable
numpy references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spca import _bca_fast as fast
from spca import _certificate_fast as cfast


def _random_pd(rng, n, cond=1e3):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ev = np.geomspace(1.0, 1.0 / cond, n)
    A = (Q * ev) @ Q.T
    return np.ascontiguousarray(0.5 * (A + A.T))


def _sample_covariance(rng, n):
    # the covariance of 2 n Gaussian samples (well conditioned, no structure)
    F = rng.standard_normal((2 * n, n))
    return np.ascontiguousarray(F.T @ F / (2 * n))


# --- cubic root ---------------------------------------------------------------

finite = dict(allow_nan=False, allow_infinity=False, allow_subnormal=False)


@given(
    c=st.floats(-1e3, 1e3, **finite),
    log_beta=st.floats(-12, 1),
    r2=st.one_of(st.just(0.0), st.floats(1e-14, 1e3, **finite)),
)
def test_cubic_root_solves_the_cubic(c, log_beta, r2):
    beta = 10.0**log_beta
    tau = fast.cubic_root(c, beta, r2)
    assert tau > 0
    # residual relative to the size of the terms
    terms = np.array([tau**3, c * tau**2, beta * tau, r2])
    resid = tau**3 + c * tau**2 - beta * tau - r2
    assert abs(resid) <= 1e-12 * np.abs(terms).max()
    # it is the unique positive root: f < 0 just below, > 0 just above
    f = lambda t: ((t + c) * t - beta) * t - r2  # noqa: E731
    assert f(tau * (1 - 1e-9)) <= 0 <= f(tau * (1 + 1e-9))


def test_cubic_root_cancellation_free_small_root():
    # c >> 0, r2 = 0: tau = beta / c to first order
    tau = fast.cubic_root(1e3, 1e-12, 0.0)
    assert tau == pytest.approx(1e-15, rel=1e-12)


@pytest.mark.parametrize("beta, r2", [(0.0, 1.0), (-1.0, 1.0), (1.0, -1e-3), (np.nan, 1.0)])
def test_cubic_root_rejects_bad_arguments(beta, r2):
    with pytest.raises(ValueError, match="must be"):
        fast.cubic_root(0.5, beta, r2)


# --- box QP ---------------------------------------------------------------------


def _kkt_violation(Y, s, lam, u):
    """Largest violation of the KKT conditions of min u'Yu, |u - s| <= lam."""
    g = Y @ u
    lo, hi = s - lam, s + lam
    scale = np.abs(g).max() + 1e-300
    v = 0.0
    for i in range(len(u)):
        if u[i] <= lo[i]:
            v = max(v, -g[i])  # at the lower bound the gradient must be >= 0
        elif u[i] >= hi[i]:
            v = max(v, g[i])  # at the upper bound it must be <= 0
        else:
            v = max(v, abs(g[i]))
    return v / scale, np.all(u >= lo) and np.all(u <= hi)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), lam=st.floats(0.01, 2.0))
def test_box_qp_cd_satisfies_kkt(seed, n, lam):
    rng = np.random.default_rng(seed)
    Y = _random_pd(rng, n, cond=100.0)
    s = rng.standard_normal(n)
    u = np.clip(np.zeros(n), s - lam, s + lam)
    w = np.empty(n)
    passes = fast.box_qp(Y, s, lam, u, w, 20000, 1e-14)
    assert 1 <= passes <= 20000
    np.testing.assert_allclose(w, Y @ u, atol=1e-10)
    viol, feasible = _kkt_violation(Y, s, lam, u)
    assert feasible
    assert viol < 1e-6


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 14), lam=st.floats(0.01, 1.0))
def test_active_set_finish_is_exact(seed, n, lam):
    # X is the full matrix, j the left-out index, Y = X[\j, \j]
    rng = np.random.default_rng(seed)
    X = _random_pd(rng, n, cond=1e4)
    H = np.ascontiguousarray(np.linalg.inv(X))
    j = int(rng.integers(n))
    s = rng.standard_normal(n)
    u = np.clip(np.zeros(n), s - lam, s + lam)
    w = np.empty(n)
    fast.box_qp(X, s, lam, u, w, 1, 1e-3, j)
    ok = fast.box_qp_finish(H, j, s, lam, u, w, n, 100)
    assert ok
    keep = np.r_[0:j, j + 1 : n]
    Y = X[np.ix_(keep, keep)]
    viol, feasible = _kkt_violation(Y, s[keep], lam, u[keep])
    assert feasible
    assert viol < 1e-8
    np.testing.assert_allclose(w[keep], Y @ u[keep], atol=1e-8 * np.abs(Y @ u[keep]).max())


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 40), lam=st.floats(0.05, 2.0))
def test_active_set_finish_from_a_vertex_drops_bounds_exactly(seed, n, lam):
    # Starting with every coordinate at a bound, the method must release many
    # of them: each release deletes a row and column of the Cholesky factor
    # of G_BB (Givens rotations), which must stay exact.
    rng = np.random.default_rng(seed)
    X = _random_pd(rng, n, cond=1e3)
    H = np.ascontiguousarray(np.linalg.inv(X))
    j = int(rng.integers(n))
    s = 0.3 * rng.standard_normal(n)
    u = s + lam * rng.choice([-1.0, 1.0], size=n)
    w = np.empty(n)
    assert fast.box_qp_finish(H, j, s, lam, u, w, n, 4 * n + 10)
    keep = np.r_[0:j, j + 1 : n]
    Y = X[np.ix_(keep, keep)]
    viol, feasible = _kkt_violation(Y, s[keep], lam, u[keep])
    assert feasible
    assert viol < 1e-7
    np.testing.assert_allclose(w[keep], Y @ u[keep], atol=1e-7 * max(np.abs(Y @ u[keep]).max(), 1))


def test_active_set_finish_gives_up_on_small_workspace():
    rng = np.random.default_rng(0)
    X = _random_pd(rng, 8)
    s = 5.0 * np.ones(8)  # 0 is outside every box: all coordinates at bounds
    u = s - 0.1
    w = np.empty(8)
    before = u.copy()
    assert not fast.box_qp_finish(np.linalg.inv(X), 0, s, 0.1, u, w, 2, 50)
    np.testing.assert_array_equal(u, before)


# --- row/column update ----------------------------------------------------------


@pytest.mark.parametrize("finish", [True, False])
@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10))
def test_column_updates_keep_x_positive_definite(finish, seed, n):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n + 3, n))
    Sigma = np.ascontiguousarray(F.T @ F / (n + 3))
    lam = float(rng.uniform(0.0, 0.5) * np.abs(Sigma).max())
    beta = 10.0 ** rng.uniform(-8, -2)
    X = np.eye(n) / n
    M = np.ascontiguousarray(np.sign(Sigma) * np.maximum(np.abs(Sigma) - lam, 0.0))
    H = np.ascontiguousarray(np.linalg.inv(X)) if finish else np.empty((0, 0))
    work = fast.Workspace(n, n)
    trace = float(np.trace(X))
    for _ in range(3):
        for j in range(n):
            Y = X[np.r_[0:j, j + 1 : n]][:, np.r_[0:j, j + 1 : n]].copy()
            t = trace - X[j, j]
            trace, tau, passes, exact = fast.column_update(
                Sigma, X, H, M, j, lam, beta, trace, work=work, max_passes=5, qp_tol=1e-3,
                max_rounds=50 if finish else 0
            )
            assert exact in (0, 1) and (finish or exact == 0)
            # tau solves the cubic of this column
            c = Sigma[j, j] - lam - t
            keep = np.r_[0:j, j + 1 : n]
            u = M[j, keep]
            r2 = u @ Y @ u
            resid = tau**3 + c * tau**2 - beta * tau - r2
            assert abs(resid) <= 1e-9 * max(tau**3, abs(c) * tau**2, beta * tau, r2)
            # the dual column stays in the box
            assert np.all(np.abs(u - Sigma[keep, j]) <= lam * (1 + 1e-12) + 1e-15)
            # the Schur complement of Y in X is beta / tau, so X stays PD
            y = X[keep, j]
            schur = X[j, j] - y @ np.linalg.solve(Y, y)
            assert schur == pytest.approx(beta / tau, rel=1e-6)
            assert trace == pytest.approx(np.trace(X), rel=1e-12)
            assert np.linalg.eigvalsh(X)[0] > 0
            if finish:
                # H tracks X^-1 up to rounding amplified by the conditioning
                err = np.abs(H @ X - np.eye(n)).max()
                assert err <= 1e-11 * np.linalg.cond(X)
    np.testing.assert_array_equal(X, X.T)


def test_sweep_matches_column_updates():
    rng = np.random.default_rng(3)
    F = rng.standard_normal((20, 9))
    Sigma = np.ascontiguousarray(F.T @ F / 20)
    lam, beta = 0.3, 1e-4
    M0 = np.ascontiguousarray(np.sign(Sigma) * np.maximum(np.abs(Sigma) - lam, 0.0))
    X1, X2 = np.eye(9) / 9, np.eye(9) / 9
    M1, M2 = M0.copy(), M0.copy()
    H1, H2 = np.linalg.inv(X1), np.linalg.inv(X2)
    work = fast.Workspace(9, 9)
    trace = 1.0
    for j in range(9):
        trace, *_ = fast.column_update(Sigma, X1, H1, M1, j, lam, beta, trace, work=work,
                                       max_passes=5, qp_tol=1e-3, max_rounds=50)
    trace2, passes, n_exact = fast.bca_sweep(Sigma, X2, H2, M2, lam, beta, 1.0, work,
                                             max_passes=5, qp_tol=1e-3, max_rounds=50)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(M1, M2)
    assert trace2 == trace
    assert n_exact == 9 and passes >= 9


# --- graph of |S_ab| > lam ------------------------------------------------------


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), lam=st.floats(0.0, 3.0),
       subset=st.booleans())
def test_threshold_components_match_scipy(seed, n, lam, subset):
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    S = rng.standard_normal((n, n))
    S = np.ascontiguousarray(S + S.T)
    idx = np.flatnonzero(rng.random(n) < 0.6) if subset else np.arange(n)
    idx = idx.astype(np.intp)
    m = idx.size
    labels, excess = np.empty(m, dtype=np.intp), np.empty(m)
    before = S.copy()
    n_comp = fast.threshold_components(S, idx, lam, labels, excess)
    np.testing.assert_array_equal(S, before)
    sub = np.abs(S[np.ix_(idx, idx)])
    A = sub > lam
    np.fill_diagonal(A, False)
    ref_n, ref_labels = connected_components(csr_matrix(A), directed=False)
    assert n_comp == ref_n
    np.testing.assert_array_equal(labels, ref_labels)  # same numbering
    np.testing.assert_allclose(excess, np.where(A, sub - lam, 0.0).sum(axis=1), atol=1e-12)


def test_threshold_components_rejects_bad_arguments():
    S = np.eye(3)
    ok = np.arange(3, dtype=np.intp)
    with pytest.raises(ValueError, match=r"idx\[1\] = 7 is out of range 0\.\.2"):
        fast.threshold_components(S, np.array([0, 7], dtype=np.intp), 0.1,
                                  np.empty(2, dtype=np.intp), np.empty(2))
    with pytest.raises(ValueError, match="length len\\(idx\\) = 3"):
        fast.threshold_components(S, ok, 0.1, np.empty(2, dtype=np.intp), np.empty(3))
    with pytest.raises(ValueError, match="must be square"):
        fast.threshold_components(np.zeros((3, 4)), ok, 0.1, np.empty(3, dtype=np.intp),
                                  np.empty(3))


# --- certificate kernels --------------------------------------------------------


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60),
       spread=st.sampled_from([1.0, 1e-8, 0.0]))
def test_top_eigh_matches_numpy(seed, n, spread):
    # spread 0 / 1e-8: a (nearly) repeated top eigenvalue
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ev = rng.standard_normal(n)
    ev[: max(n // 3, 1)] = 2.0 + spread * rng.random(max(n // 3, 1))
    A = np.ascontiguousarray((Q * ev) @ Q.T)
    A = 0.5 * (A + A.T)
    before = A.copy()
    top, v = cfast.top_eigh(A)
    top_only, none = cfast.top_eigh(A, False)
    np.testing.assert_array_equal(A, before)
    assert none is None
    w = np.linalg.eigvalsh(A)
    scale = np.abs(w).max() + 1.0
    assert abs(top - w[-1]) <= 1e-12 * scale and abs(top_only - w[-1]) <= 1e-12 * scale
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-12)
    assert np.linalg.norm(A @ v - top * v) <= 1e-10 * scale


def _polish_reference(Sigma, S, signs, lam, max_iter):
    """The sign-fixed polish written with numpy (see _certificate._polish_support)."""
    sub = Sigma[np.ix_(S, S)]
    sigma = signs.astype(float)
    best_x, best = np.zeros(S.size), -np.inf
    for _ in range(max_iter):
        w, V = np.linalg.eigh(sub - lam * np.outer(sigma, sigma))
        x = V[:, -1]
        if x[np.argmax(np.abs(x))] < 0:
            x = -x
        val = x @ sub @ x - lam * np.abs(x).sum() ** 2
        if val > best:
            best_x, best = x, val
        new = np.sign(x)
        if np.array_equal(new, sigma) or not new.any():
            break
        sigma = new
    return best_x, best


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), lam=st.floats(0.0, 1.0),
       max_iter=st.integers(1, 6))
def test_polish_support_matches_the_numpy_loop(seed, n, lam, max_iter):
    rng = np.random.default_rng(seed)
    Sigma = _sample_covariance(rng, n)
    S = np.sort(rng.choice(n, size=rng.integers(2, n + 1), replace=False)).astype(np.intp)
    signs = rng.choice([-1.0, 1.0], size=S.size)
    x = np.empty(S.size)
    val = cfast.polish_support(Sigma, S, signs, lam, max_iter, x)
    ref_x, ref_val = _polish_reference(Sigma, S, signs, lam, max_iter)
    assert val == pytest.approx(ref_val, rel=1e-10, abs=1e-12)
    # the same vector unless two candidates tie in value
    assert val == pytest.approx(x @ Sigma[np.ix_(S, S)] @ x - lam * np.abs(x).sum() ** 2,
                                rel=1e-12, abs=1e-14)
    assert np.linalg.norm(x) == pytest.approx(1.0, abs=1e-12)


def _polish_loop_reference(Sigma, lam, v, thresholds, max_support, patience, memo):
    """_certificate.polish's loop over the thresholds as it was written in
    Python (each support polished by the compiled polish_support)."""
    a = np.abs(v)
    vmax = a.max()
    best_x, best_val = None, -np.inf
    seen = set()
    worse = 0
    for theta in thresholds:
        S = np.flatnonzero(a >= theta * vmax)
        if S.size in seen or (S.size > max_support and best_x is not None):
            continue
        if worse >= patience:
            break
        seen.add(S.size)
        signs = np.sign(v[S])
        key = (S.tobytes(), signs.tobytes())
        hit = None if memo is None else memo.get(key)
        if hit is None:
            x = np.zeros(v.size)
            if S.size == 1:
                x[S[0]] = 1.0
                hit = (x, float(Sigma[S[0], S[0]]) - lam)
            else:
                xs = np.empty(S.size)
                val = cfast.polish_support(Sigma, S.astype(np.intp), signs, lam, 5, xs)
                x[S] = xs
                hit = (x, float(val))
            if memo is not None:
                memo[key] = hit
        x, val = hit
        if best_x is None or val > best_val + 1e-12 * abs(best_val):
            best_x, best_val = x, val
            worse = 0
        elif val < best_val:
            worse += 1
    return best_x, best_val


@settings(max_examples=80)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), lam=st.floats(0.0, 1.0),
       max_support=st.integers(1, 40), patience=st.integers(1, 3), sparse=st.booleans(),
       memo=st.booleans())
def test_polish_thresholds_is_the_python_loop_bit_for_bit(seed, n, lam, max_support, patience,
                                                          sparse, memo):
    from spca._certificate import SUPPORT_THRESHOLDS

    rng = np.random.default_rng(seed)
    Sigma = _sample_covariance(rng, n)
    v = rng.standard_normal(n) * rng.uniform(1e-8, 1.0, n) ** 3
    if sparse:
        v[rng.random(n) < 0.5] = 0.0
        v[rng.integers(n)] = 1.0
    memo_a = {} if memo else None
    memo_b = {} if memo else None
    for _ in range(2):  # (the second call from the memo, if any)
        x, val = cfast.polish_thresholds(Sigma, lam, v, SUPPORT_THRESHOLDS, max_support,
                                         patience, memo_a)
        ref_x, ref_val = _polish_loop_reference(Sigma, lam, v, SUPPORT_THRESHOLDS,
                                                max_support, patience, memo_b)
        assert val == ref_val
        np.testing.assert_array_equal(x, ref_x)
    if memo:
        assert memo_a.keys() == memo_b.keys()


def test_polish_thresholds_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"Sigma must be 3 x 3 \(the length of v\), got \(2, 2\)"):
        cfast.polish_thresholds(np.eye(2), 0.1, np.ones(3), (0.5,), 3, 2, None)
    with pytest.raises(ValueError, match="at least one entry"):
        from spca._certificate import polish

        polish(np.zeros((0, 0)), 0.1, np.zeros(0))


def test_certificate_kernels_reject_bad_arguments():
    with pytest.raises(ValueError, match=r"must be square, got shape \(2, 3\)"):
        cfast.top_eigh(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="at least one row"):
        cfast.top_eigh(np.zeros((0, 0)))
    Sigma = np.eye(3)
    with pytest.raises(ValueError, match=r"S\[1\] = 5 is out of range 0\.\.2"):
        cfast.polish_support(Sigma, np.array([0, 5], dtype=np.intp), np.ones(2), 0.1, 5,
                             np.empty(2))
    with pytest.raises(ValueError, match="length len\\(S\\) = 2"):
        cfast.polish_support(Sigma, np.array([0, 1], dtype=np.intp), np.ones(3), 0.1, 5,
                             np.empty(2))
    R = np.zeros((2, 3))
    with pytest.raises(ValueError, match="xs must have length 3, got 2"):
        cfast.project_rows(R, np.ones(2), R, R, np.empty((2, 3)))
    with pytest.raises(ValueError, match=r"hi must have shape \(2, 3\), got \(3, 3\)"):
        cfast.project_rows(R, np.ones(3), R, np.zeros((3, 3)), np.empty((2, 3)))
    with pytest.raises(ValueError, match="xs must have a nonzero entry"):
        cfast.project_rows(R, np.zeros(3), R, R, np.empty((2, 3)))


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), q=st.integers(1, 40), s=st.integers(1, 80),
       width=st.floats(1e-6, 3.0), ties=st.booleans())
def test_project_rows_matches_the_numpy_breakpoints(seed, q, s, width, ties):
    # against the NumPy evaluation at every breakpoint, up to the order of
    # the sums; ties: repeated entries of xs and of the rows (equal breakpoints)
    from _reference import project_rows_breakpoints

    rng = np.random.default_rng(seed)
    xs = rng.standard_normal(s)
    box = rng.standard_normal((q, s))
    if ties:
        xs = np.round(xs)
        box = np.round(box, 1)
    R0 = box + rng.uniform(-2, 2, (q, s)) * width
    lo, hi = box - width, box + width
    if not np.any(xs):
        xs[0] = 1.0
    ref = project_rows_breakpoints(R0, xs, lo, hi)
    scale = 1.0 + np.abs(R0).max() + np.abs(xs).max()
    out = np.empty((q, s))
    cfast.project_rows(R0, xs, lo, hi, out)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10 * scale)
    assert np.all(out >= lo) and np.all(out <= hi)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), fortran=st.booleans())
def test_offdiag_rowmax_matches_numpy(seed, n, fortran):
    from spca._variance import offdiag_rowmax

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A = np.asfortranarray(A) if fortran else A
    a = np.abs(A)
    np.fill_diagonal(a, 0.0)
    np.testing.assert_array_equal(offdiag_rowmax(A), a.max(axis=1))
    with pytest.raises(ValueError, match="out must have length"):
        fast.offdiag_rowmax(np.ascontiguousarray(A), np.empty(n + 1))


def test_shift_bound_is_rigorous_and_tight():
    from spca._certificate import shift_bound

    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 60))
    D = A + A.T
    top = np.linalg.eigvalsh(D)[-1]
    bound = shift_bound(D, top + 1e-9 * abs(top))
    assert bound is not None
    assert top <= bound <= top + 1e-8 * abs(top)
    # below the top eigenvalue the factorisation fails: no bound
    assert shift_bound(D, top - 1e-6) is None
    # D is not modified
    assert np.array_equal(D, A + A.T)


def test_lambda_max_large_lanczos_and_verification():
    from spca._certificate import LANCZOS_MIN, lambda_max_large

    rng = np.random.default_rng(1)
    n = LANCZOS_MIN + 20
    A = rng.standard_normal((n, 8))
    D = A @ A.T - 3.0 * np.eye(n)
    top = np.linalg.eigvalsh(D)[-1]
    est, y, rigorous = lambda_max_large(D)  # no target: an estimate
    assert not rigorous and abs(est - top) <= 1e-8 * abs(top)
    bound, y, rigorous = lambda_max_large(D, v0=y, target=np.inf)
    assert rigorous and top <= bound <= top + 1e-8 * abs(top)
    assert abs(abs(y @ np.linalg.eigh(D)[1][:, -1]) - 1.0) < 1e-6


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40), lam=st.floats(0.0, 1.0))
def test_project_cross_matches_gathered_rows(seed, n, lam):
    # project_cross in place against the gathered rows through the NumPy
    # reference, written back to D[Sc, S] and D[S, Sc]; the rest of D as it was
    from _reference import project_rows_breakpoints

    rng = np.random.default_rng(seed)
    Sigma = _sample_covariance(rng, n)
    S = np.sort(rng.choice(n, size=rng.integers(1, n), replace=False)).astype(np.intp)
    Sc = np.setdiff1d(np.arange(n), S).astype(np.intp)
    xs = rng.standard_normal(S.size)
    D = Sigma + rng.uniform(-lam, lam, (n, n))
    D = np.ascontiguousarray(0.5 * (D + D.T))
    box = Sigma[np.ix_(Sc, S)]
    ref = D.copy()
    cross = project_rows_breakpoints(D[np.ix_(Sc, S)], xs, box - lam, box + lam)
    ref[np.ix_(Sc, S)] = cross
    ref[np.ix_(S, Sc)] = cross.T
    sigma_before = Sigma.copy()
    cfast.project_cross(Sigma, D, S, Sc, xs, lam)
    np.testing.assert_array_equal(Sigma, sigma_before)
    scale = 1.0 + np.abs(Sigma).max() + lam
    np.testing.assert_allclose(D, ref, rtol=0, atol=1e-10 * scale)
    keep = np.ones((n, n), dtype=bool)
    keep[np.ix_(Sc, S)] = keep[np.ix_(S, Sc)] = False
    np.testing.assert_array_equal(D[keep], ref[keep])  # untouched outside the cross block


def test_project_cross_rejects_bad_arguments():
    Sigma, D = np.eye(3), np.eye(3)
    S, Sc = np.array([0], dtype=np.intp), np.array([1, 2], dtype=np.intp)
    with pytest.raises(ValueError, match="xs must have length len\\(S\\) = 1, got 2"):
        cfast.project_cross(Sigma, D, S, Sc, np.ones(2), 0.1)
    with pytest.raises(ValueError, match=r"xs\[0\] is zero"):
        cfast.project_cross(Sigma, D, S, Sc, np.zeros(1), 0.1)
    with pytest.raises(ValueError, match=r"Sc\[1\] = 3 is out of range 0\.\.2"):
        cfast.project_cross(Sigma, D, S, np.array([1, 3], dtype=np.intp), np.ones(1), 0.1)
    with pytest.raises(ValueError, match="must be square of the same size"):
        cfast.project_cross(np.eye(2), D, S, Sc, np.ones(1), 0.1)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), lam=st.floats(0.0, 1.0))
def test_barrier_fill_matches_numpy(seed, n, lam):
    # bit for bit the NumPy clip of the symmetric part, diagonal Sigma_jj - lam
    rng = np.random.default_rng(seed)
    Sigma = _sample_covariance(rng, n)
    M = Sigma + rng.uniform(-2 * lam - 0.1, 2 * lam + 0.1, (n, n))
    M_before = M.copy()
    ref = np.clip(0.5 * (M + M.T), Sigma - lam, Sigma + lam)
    np.fill_diagonal(ref, np.diag(Sigma) - lam)
    D = np.empty((n, n))
    cfast.barrier_fill(Sigma, lam, M, D)
    np.testing.assert_array_equal(D, ref)
    np.testing.assert_array_equal(M, M_before)
    with pytest.raises(ValueError, match=rf"D must have shape \({n}, {n}\)"):
        cfast.barrier_fill(Sigma, lam, M, np.empty((n + 1, n)))


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), lam=st.floats(0.0, 2.0))
def test_soft_fill_matches_numpy(seed, n, lam):
    # bit for bit (signs of zeros included) the NumPy soft thresholding
    rng = np.random.default_rng(seed)
    Sigma = rng.standard_normal((n, n))
    Sigma[rng.random((n, n)) < 0.2] = lam  # entries on the box's edges
    Sigma[rng.random((n, n)) < 0.2] = -lam
    before = Sigma.copy()
    ref = Sigma - np.clip(Sigma, -lam, lam)
    np.fill_diagonal(ref, np.diag(Sigma) - lam)
    out = np.empty((n, n))
    cfast.soft_fill(Sigma, lam, out)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(ref))
    np.testing.assert_array_equal(Sigma, before)
    with pytest.raises(ValueError, match=rf"out must have shape \({n}, {n}\)"):
        cfast.soft_fill(Sigma, lam, np.empty((n, n + 1)))


def test_rank_one_dual_matrix_layouts_and_zero_x():
    # a Fortran-ordered base gives the same matrix as a C-ordered one, the
    # caller's base is untouched with copy=True, and x = 0 leaves the base
    import spca._certificate as cert

    rng = np.random.default_rng(3)
    F = rng.standard_normal((20, 8))
    Sigma = F.T @ F / 20
    lam = 0.1
    x = np.zeros(8)
    x[[1, 4, 6]] = [0.6, -0.7, 0.39]
    base = cert.soft_thresholded(Sigma, lam)
    kept = base.copy()
    D = cert.rank_one_dual_matrix(Sigma, lam, x, base)
    np.testing.assert_array_equal(base, kept)
    np.testing.assert_array_equal(
        cert.rank_one_dual_matrix(Sigma, lam, x, np.asfortranarray(base), copy=False), D)
    np.testing.assert_array_equal(D, D.T)
    assert np.all(np.abs(D - Sigma) <= lam * (1 + 1e-12))
    np.testing.assert_array_equal(cert.rank_one_dual_matrix(Sigma, lam, np.zeros(8)), base)
